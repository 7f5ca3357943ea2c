"""Foreground deletion of an owner chain across kinds, followed through watch.Watch().stream.

Usage: gc_chain.py KUBECONFIG NAMESPACE
The namespace exists and is empty. The script builds root (ConfigMap) <- mid (Secret) <- leaf
(ConfigMap), every reference by uid with block_owner_deletion=True, starts one watch on configmaps
and one on secrets from the resourceVersion of their lists, deletes root with
V1DeleteOptions(propagation_policy='Foreground') and prints one JSON line per watch event:
  {"event": {"type", "kind", "name", "resourceVersion", "deletionTimestamp", "finalizers", "ownerUids"}}
then a last line {"done": true|false, "created": {...}, "delete_response": {...}} once all three
are DELETED (done=true) or the deadline passed (done=false).
"""
import json
import os
import sys
import threading
import time

from kubernetes import client, config, watch

DEADLINE_S = 30


def main():
    kubeconfig, ns = sys.argv[1], sys.argv[2]
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()

    def owner_ref(kind, obj):
        return client.V1OwnerReference(
            api_version="v1", kind=kind, name=obj.metadata.name, uid=obj.metadata.uid, block_owner_deletion=True
        )

    root = v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="root"), data={"level": "0"}))
    mid = v1.create_namespaced_secret(
        ns,
        client.V1Secret(metadata=client.V1ObjectMeta(name="mid", owner_references=[owner_ref("ConfigMap", root)]), string_data={"level": "1"}),
    )
    leaf = v1.create_namespaced_config_map(
        ns,
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="leaf", owner_references=[owner_ref("Secret", mid)]), data={"level": "2"}),
    )
    created = {
        o.metadata.name: {
            "uid": o.metadata.uid,
            "resourceVersion": o.metadata.resource_version,
            "ownerReferences": [r.to_dict() for r in (o.metadata.owner_references or [])],
        }
        for o in (root, mid, leaf)
    }

    lock = threading.Lock()
    deleted = set()
    all_deleted = threading.Event()
    ready = threading.Barrier(3)

    def follow(list_fn):
        start_rv = list_fn(ns).metadata.resource_version
        w = watch.Watch()
        ready.wait(10)
        for ev in w.stream(list_fn, ns, resource_version=start_rv, timeout_seconds=DEADLINE_S, _request_timeout=DEADLINE_S + 5):
            raw = ev["raw_object"]
            meta = raw.get("metadata", {})
            line = {
                "type": ev["type"],
                "kind": raw.get("kind"),
                "name": meta.get("name"),
                "resourceVersion": meta.get("resourceVersion"),
                "deletionTimestamp": meta.get("deletionTimestamp"),
                "finalizers": meta.get("finalizers") or [],
                "ownerUids": [r.get("uid") for r in (meta.get("ownerReferences") or [])],
            }
            with lock:
                print(json.dumps({"event": line}), flush=True)
                if ev["type"] == "DELETED":
                    deleted.add((line["kind"], line["name"]))
                    if {("ConfigMap", "root"), ("Secret", "mid"), ("ConfigMap", "leaf")} <= deleted:
                        all_deleted.set()

    for fn in (v1.list_namespaced_config_map, v1.list_namespaced_secret):
        threading.Thread(target=follow, args=(fn,), daemon=True).start()
    ready.wait(10)
    # Both watches start from their list's resourceVersion: nothing after it is missed even if the
    # request is still in flight.
    resp = v1.delete_namespaced_config_map("root", ns, body=client.V1DeleteOptions(propagation_policy="Foreground"))
    # The response to a foreground delete is the object, now with its deletionTimestamp and the
    # foregroundDeletion finalizer (the client deserializes it as a V1Status, keep what it kept).
    delete_response = resp.to_dict() if hasattr(resp, "to_dict") else str(resp)
    done = all_deleted.wait(DEADLINE_S)
    with lock:
        print(json.dumps({"done": done, "created": created, "delete_response": delete_response}, default=str), flush=True)
    # The watch threads may still be blocked on their sockets: leave without joining them.
    os._exit(0)


if __name__ == "__main__":
    main()
