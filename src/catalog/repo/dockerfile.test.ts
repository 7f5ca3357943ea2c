// Cases of operator-registry alpha/action/generate_dockerfile_test.go, as fixtures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateDockerfile, parseLabels } from './dockerfile.js';

const HEAD = (builder: string, base: string): string => `# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM ${builder} as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD bar /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM ${base}
`;
const WITH_OPM = `# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
`;
const SCRATCH = `# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache
`;
const TAIL = `
COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs
`;
const LABELS = `
# Set other custom labels
LABEL "key1"="value1"
LABEL "key2"="value2"
`;
const extraLabels = { key2: 'value2', key1: 'value1' };

test('generateDockerfile: upstream cases', () => {
  assert.throws(() => generateDockerfile({ baseImage: '', builderImage: 'foo', indexDir: 'bar', extraLabels }), { message: 'base image is unset' });
  assert.throws(() => generateDockerfile({ baseImage: 'foo', builderImage: 'foo', indexDir: '', extraLabels }), { message: 'index directory is unset' });
  assert.throws(() => generateDockerfile({ baseImage: 'scratch', builderImage: 'foo', indexDir: '', extraLabels }), { message: 'index directory is unset' });
  assert.equal(generateDockerfile({ baseImage: 'foo', builderImage: 'foo', indexDir: 'bar' }), HEAD('foo', 'foo') + WITH_OPM + TAIL);
  assert.equal(generateDockerfile({ baseImage: 'foo', builderImage: 'foo', indexDir: 'bar', extraLabels }), HEAD('foo', 'foo') + WITH_OPM + TAIL + LABELS);
  assert.equal(generateDockerfile({ baseImage: 'scratch', builderImage: 'foo', indexDir: 'bar' }), HEAD('foo', 'scratch') + SCRATCH + TAIL);
  assert.equal(
    generateDockerfile({ baseImage: 'scratch', builderImage: 'foo', indexDir: 'bar', extraLabels }),
    HEAD('foo', 'scratch') + SCRATCH + TAIL + LABELS,
  );
});

test('parseLabels: key=value, the last duplicate wins, a value may hold "="', () => {
  assert.deepEqual(parseLabels(['a=1', 'b=x=y', 'a=2']), { a: '2', b: 'x=y' });
  assert.throws(() => parseLabels(['novalue']), { message: 'invalid label "novalue"' });
});
