// apiserver_storage_transformation_* (k8s.io/apiserver/pkg/storage/value/metrics.go): names,
// labels, help and buckets as upstream, so kube's dashboards and alerts on them work unchanged.
import { createHash } from 'node:crypto';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { TransformationMetrics } from './transformer.js';

/** metrics.ExponentialBuckets(5e-6, 2, 25). */
const DURATION_BUCKETS = Array.from({ length: 25 }, (_, i) => 5e-6 * 2 ** i);

export function createTransformationMetrics(registry: Registry): TransformationMetrics {
  const operations = new Counter({
    name: 'apiserver_storage_transformation_operations_total',
    help:
      "Total number of transformations. Successful transformation will have a status 'OK' and a varied status string when the transformation fails. " +
      'The status, resource, and transformation_type fields can be used for alerting purposes. For example, you can monitor for encryption/decryption ' +
      'failures using the transformation_type (e.g., from_storage for decryption and to_storage for encryption). Additionally, these fields can be used ' +
      'to ensure that the correct transformers are applied to each resource.',
    labelNames: ['resource', 'transformation_type', 'transformer_prefix', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'apiserver_storage_transformation_duration_seconds',
    help: 'Latencies in seconds of value transformation operations.',
    labelNames: ['transformation_type', 'transformer_prefix'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  return {
    record(o) {
      // getErrorCode: "OK", or "unknown-non-grpc" for every failure that did not come from a KMS plugin.
      operations.inc({ resource: o.resource, transformation_type: o.type, transformer_prefix: o.prefix, status: o.ok ? 'OK' : 'unknown-non-grpc' });
      if (o.ok) duration.observe({ transformation_type: o.type, transformer_prefix: o.prefix }, o.durationSeconds);
    },
  };
}

/**
 * apiserver_encryption_config_controller_automatic_reloads_total{status, apiserver_id_hash}
 * (pkg/server/options/encryptionconfig/metrics). `apiServerID` is hashed as upstream hashes it.
 */
export function createReloadMetrics(registry: Registry, apiServerID: string): (ok: boolean) => void {
  const reloads = new Counter({
    name: 'apiserver_encryption_config_controller_automatic_reloads_total',
    help: 'Total number of reload successes and failures of encryption configuration split by apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'],
    registers: [registry],
  });
  const idHash = `sha256:${createHash('sha256').update(apiServerID).digest('hex')}`;
  return (ok) => reloads.inc({ status: ok ? 'success' : 'failure', apiserver_id_hash: idHash });
}
