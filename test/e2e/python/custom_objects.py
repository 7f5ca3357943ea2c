"""CustomObjectsApi against a CRD the test created (widgets.py.example.com, namespaced, v1, status
subresource, schema with validation): create, get, list with a label selector, merge patch,
the status subresource, a 422 for an object that violates the schema, delete, and
watch.Watch().stream(custom.list_namespaced_custom_object, ...) while another thread writes.

Usage: custom_objects.py KUBECONFIG NAMESPACE
Prints one JSON document.
"""
import json
import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

G, V, P = "py.example.com", "v1", "widgets"


def body(name, size, labels=None):
    return {
        "apiVersion": f"{G}/{V}",
        "kind": "Widget",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"size": size, "color": "red"},
    }


def main():
    kubeconfig, ns = sys.argv[1], sys.argv[2]
    config.load_kube_config(config_file=kubeconfig)
    custom = client.CustomObjectsApi()
    out = {}

    created = custom.create_namespaced_custom_object(G, V, ns, P, body("one", 1, {"team": "a"}))
    out["created"] = {
        "name": created["metadata"]["name"],
        "rv": created["metadata"]["resourceVersion"],
        "generation": created["metadata"]["generation"],
        "spec": created["spec"],
        "managers": [e["manager"] for e in created["metadata"].get("managedFields", [])],
    }
    custom.create_namespaced_custom_object(G, V, ns, P, body("two", 2, {"team": "b"}))

    got = custom.get_namespaced_custom_object(G, V, ns, P, "one")
    out["got"] = {"spec": got["spec"], "kind": got["kind"], "api_version": got["apiVersion"]}

    listed = custom.list_namespaced_custom_object(G, V, ns, P)
    out["listed"] = {"kind": listed["kind"], "names": sorted(i["metadata"]["name"] for i in listed["items"])}
    selected = custom.list_namespaced_custom_object(G, V, ns, P, label_selector="team=b")
    out["selected"] = [i["metadata"]["name"] for i in selected["items"]]
    cluster = custom.list_cluster_custom_object(G, V, P)
    out["cluster_names"] = sorted(i["metadata"]["name"] for i in cluster["items"])

    # The client sends application/merge-patch+json for a dict body on custom objects.
    patched = custom.patch_namespaced_custom_object(G, V, ns, P, "one", {"spec": {"size": 5, "color": None}})
    out["patched"] = {"spec": patched["spec"], "generation": patched["metadata"]["generation"]}

    st = custom.patch_namespaced_custom_object_status(G, V, ns, P, "one", {"status": {"phase": "Ready"}, "spec": {"size": 99}})
    out["status_patched"] = {"status": st.get("status"), "spec": st["spec"], "generation": st["metadata"]["generation"]}
    got_status = custom.get_namespaced_custom_object_status(G, V, ns, P, "one")
    out["got_status"] = got_status.get("status")

    try:
        custom.create_namespaced_custom_object(G, V, ns, P, body("bad", -1))
        out["invalid"] = None
    except ApiException as e:
        st = json.loads(e.body)
        out["invalid"] = {"http": e.status, "reason": st.get("reason"), "message": st.get("message"), "causes": st.get("details", {}).get("causes")}

    try:
        custom.get_namespaced_custom_object(G, V, ns, P, "missing")
        out["missing"] = None
    except ApiException as e:
        out["missing"] = {"http": e.status, "reason": json.loads(e.body).get("reason")}

    deleted = custom.delete_namespaced_custom_object(G, V, ns, P, "two")
    out["deleted"] = {"kind": deleted.get("kind"), "status": deleted.get("status"), "details": {k: v for k, v in (deleted.get("details") or {}).items() if k != "uid"}}

    # Watch from the list's resourceVersion while another thread writes.
    rv = custom.list_namespaced_custom_object(G, V, ns, P)["metadata"]["resourceVersion"]

    def writer():
        time.sleep(0.3)
        custom.create_namespaced_custom_object(G, V, ns, P, body("w", 1))
        custom.patch_namespaced_custom_object(G, V, ns, P, "w", {"spec": {"size": 2}})
        custom.delete_namespaced_custom_object(G, V, ns, P, "w")

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    events = []
    w = watch.Watch()
    for ev in w.stream(custom.list_namespaced_custom_object, G, V, ns, P, resource_version=rv, timeout_seconds=5):
        obj = ev["object"]
        events.append({"type": ev["type"], "name": obj["metadata"]["name"], "size": obj.get("spec", {}).get("size"), "class": type(obj).__name__})
        if ev["type"] == "DELETED" and obj["metadata"]["name"] == "w":
            w.stop()
    t.join(5)
    out["events"] = events
    print(json.dumps(out))


if __name__ == "__main__":
    main()
