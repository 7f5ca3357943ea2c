// Placeholder until this subcommand lands.
export const usage = 'Usage: kplane catalog bundle (not implemented yet)\n';

export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('kplane catalog bundle: not implemented yet\n');
  return 1;
}
