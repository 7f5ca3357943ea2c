// The catalog image Dockerfile, as `opm generate dockerfile` writes it (operator-registry
// alpha/action/generate_dockerfile.go): a builder stage that pre-populates the serve cache,
// then the base image with the FBC root at /configs and the configs-location label.

/** The label OLM reads to find the FBC root inside a catalog image. */
export const CONFIGS_LOCATION_LABEL = 'operators.operatorframework.io.index.configs.v1';

/** opm's default for both the base and the builder image. */
export const DEFAULT_OPM_IMAGE = 'quay.io/operator-framework/opm:latest';

export interface DockerfileOptions {
  baseImage: string;
  builderImage: string;
  /** the FBC root directory, relative to the Dockerfile (opm: the last element of the path) */
  indexDir: string;
  extraLabels?: Record<string, string>;
}

export function generateDockerfile(o: DockerfileOptions): string {
  if (o.baseImage === '') throw new Error('base image is unset');
  if (o.indexDir === '') throw new Error('index directory is unset');
  let s = `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM ${o.builderImage} as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD ${o.indexDir} /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM ${o.baseImage}
`;
  if (o.baseImage !== 'scratch') {
    s += `# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
`;
  } else {
    s += `# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache
`;
  }
  s += `
COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL ${CONFIGS_LOCATION_LABEL}=/configs
`;
  // Go's text/template ranges over a map in sorted key order.
  const labels = Object.keys(o.extraLabels ?? {}).sort();
  if (labels.length > 0) {
    s += '\n# Set other custom labels\n';
    for (const k of labels) s += `LABEL "${k}"="${o.extraLabels![k]}"\n`;
  }
  return s;
}

/** opm's parseLabels: each "key=value"; a later duplicate key wins. */
export function parseLabels(items: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of items) {
    const i = l.indexOf('=');
    if (i < 0) throw new Error(`invalid label "${l}"`);
    out[l.slice(0, i)] = l.slice(i + 1);
  }
  return out;
}
