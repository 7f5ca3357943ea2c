// The versions feature gates are keyed by (k8s.io/apimachinery/pkg/util/version, the part gates use):
// "1.31" or "1.31.2", an optional leading "v"; compared component by component, a missing
// component counting as 0; String() prints the components that were given.

export class Version {
  private constructor(private readonly parts: readonly number[]) {}

  /** version.MajorMinor(major, minor). */
  static majorMinor(major: number, minor: number): Version {
    return new Version([major, minor]);
  }

  /** version.ParseGeneric: two or three dot-separated non-negative integers, optionally after "v". */
  static parse(s: string): Version {
    const text = s.trim();
    const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/.exec(text);
    if (!m) throw new Error(`could not parse ${JSON.stringify(s)} as version`);
    const parts = [Number(m[1]), Number(m[2])];
    if (m[3] !== undefined) parts.push(Number(m[3]));
    return new Version(parts);
  }

  get major(): number {
    return this.parts[0]!;
  }

  get minor(): number {
    return this.parts[1]!;
  }

  /** How many components the version was written with (a gate's spec version must have two). */
  components(): number {
    return this.parts.length;
  }

  compare(o: Version): number {
    const n = Math.max(this.parts.length, o.parts.length);
    for (let i = 0; i < n; i++) {
      const a = this.parts[i] ?? 0;
      const b = o.parts[i] ?? 0;
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  }

  lessThan(o: Version): boolean {
    return this.compare(o) < 0;
  }

  greaterThan(o: Version): boolean {
    return this.compare(o) > 0;
  }

  equalTo(o: Version): boolean {
    return this.compare(o) === 0;
  }

  /** SubtractMinor(n): the same major, n minors earlier (never below 0), patch dropped as upstream does. */
  subtractMinor(n: number): Version {
    return new Version([this.major, Math.max(0, this.minor - n)]);
  }

  /** The major.minor part only. */
  majorMinorOnly(): Version {
    return new Version([this.major, this.minor]);
  }

  toString(): string {
    return this.parts.join('.');
  }
}
