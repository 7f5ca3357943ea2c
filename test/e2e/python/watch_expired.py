"""A watch from a compacted resourceVersion: the client retries once, then raises ApiException(410).

Usage: watch_expired.py KUBECONFIG NAMESPACE RESOURCE_VERSION
"""
import json
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def main():
    kubeconfig, ns, rv = sys.argv[1], sys.argv[2], sys.argv[3]
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    out = {"events": [], "error": None}
    try:
        # Without timeout_seconds the client retries a 410 once before giving up.
        for ev in watch.Watch().stream(v1.list_namespaced_config_map, ns, resource_version=rv):
            out["events"].append(ev["type"])
    except ApiException as e:
        out["error"] = {"status": e.status, "reason": e.reason}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
