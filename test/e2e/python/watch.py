"""watch.Watch().stream over configmaps while another thread creates, patches and deletes one.

Usage: watch.py KUBECONFIG NAMESPACE
The namespace holds one configmap, "pre", before the script starts. Prints one JSON document.
"""
import json
import sys
import threading
import time

from kubernetes import client, config, watch


def main():
    kubeconfig, ns = sys.argv[1], sys.argv[2]
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    out = {"events": []}
    started = threading.Event()

    def writer():
        started.wait(10)
        time.sleep(0.3)
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="w"), data={"n": "1"}))
        v1.patch_namespaced_config_map("w", ns, {"data": {"n": "2"}})
        v1.delete_namespaced_config_map("w", ns)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    w = watch.Watch()
    t0 = time.monotonic()
    # No resource_version: the server starts with ADDED for what exists, then live events.
    for ev in w.stream(v1.list_namespaced_config_map, ns, timeout_seconds=5):
        obj = ev["object"]
        out["events"].append({
            "type": ev["type"],
            "name": obj.metadata.name,
            "rv": obj.metadata.resource_version,
            "data": obj.data,
            "kind": ev["raw_object"].get("kind"),
            "api_version": ev["raw_object"].get("apiVersion"),
            "class": type(obj).__name__,
        })
        if obj.metadata.name == "pre":
            started.set()
    # The stream ends when the server closes it at timeoutSeconds.
    out["elapsed"] = time.monotonic() - t0
    out["watch_resource_version"] = w.resource_version
    t.join(5)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
