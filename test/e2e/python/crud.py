"""ConfigMap CRUD, patches and label-selector lists with the official Python client.

Usage: crud.py KUBECONFIG NAMESPACE
Prints one JSON document with what each step saw; the node test asserts on it.
"""
import json
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException


def status_of(e):
    """The Status body of a failed call, as a dict."""
    try:
        body = json.loads(e.body)
    except (TypeError, ValueError):
        body = {"raw": str(e.body)}
    return {"http": e.status, "body": body}


def main():
    kubeconfig, ns = sys.argv[1], sys.argv[2]
    config.load_kube_config(config_file=kubeconfig)
    api = client.ApiClient()
    v1 = client.CoreV1Api(api)
    out = {"version": client.VersionApi(api).get_code().git_version}

    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))

    created = v1.create_namespaced_config_map(
        ns,
        client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="py-cm", labels={"app": "py", "tier": "a"}),
            data={"k": "v", "drop": "me"},
        ),
    )
    out["created"] = {
        "name": created.metadata.name,
        "namespace": created.metadata.namespace,
        "uid": created.metadata.uid,
        "rv": created.metadata.resource_version,
        "created_ts_type": type(created.metadata.creation_timestamp).__name__,
        "data": created.data,
    }

    read = v1.read_namespaced_config_map("py-cm", ns)
    out["read"] = {"uid": read.metadata.uid, "rv": read.metadata.resource_version, "data": read.data}

    read.data = {"k": "v2", "drop": "me"}
    replaced = v1.replace_namespaced_config_map("py-cm", ns, read)
    out["replaced"] = {"rv": replaced.metadata.resource_version, "data": replaced.data}

    # Replace with the stale object from the create: 409 Conflict.
    created.data = {"k": "stale"}
    try:
        v1.replace_namespaced_config_map("py-cm", ns, created)
        out["conflict"] = None
    except ApiException as e:
        out["conflict"] = status_of(e)

    # A dict body: this client version sends it as a strategic merge patch.
    captured = {}
    orig_request = api.rest_client.pool_manager.request

    def spy(method, url, **kw):
        if method == "PATCH":
            captured["content_type"] = kw.get("headers", {}).get("Content-Type")
        return orig_request(method, url, **kw)

    api.rest_client.pool_manager.request = spy
    smp = v1.patch_namespaced_config_map("py-cm", ns, {"data": {"smp": "1"}, "metadata": {"labels": {"patched": "smp"}}})
    out["strategic"] = {"content_type": captured.get("content_type"), "data": smp.data, "labels": smp.metadata.labels}

    # A list body is a JSON patch.
    jp = v1.patch_namespaced_config_map("py-cm", ns, [{"op": "replace", "path": "/data/k", "value": "v3"}])
    out["jsonpatch"] = {"content_type": captured.get("content_type"), "data": jp.data}
    api.rest_client.pool_manager.request = orig_request

    # An explicit JSON merge patch: null deletes a key.
    data, status, headers = api.call_api(
        "/api/v1/namespaces/{namespace}/configmaps/{name}",
        "PATCH",
        path_params={"namespace": ns, "name": "py-cm"},
        header_params={"Content-Type": "application/merge-patch+json", "Accept": "application/json"},
        body={"data": {"drop": None, "merge": "yes"}},
        response_type="V1ConfigMap",
        auth_settings=["BearerToken"],
        _return_http_data_only=False,
    )
    out["merge"] = {"http": status, "content_type": headers.get("Content-Type"), "data": data.data}

    # A JSON patch whose test fails: 422 from the server.
    try:
        v1.patch_namespaced_config_map("py-cm", ns, [{"op": "test", "path": "/data/k", "value": "nope"}])
        out["failed_test_op"] = None
    except ApiException as e:
        out["failed_test_op"] = status_of(e)

    for name, labels in [("py-other", {"app": "other"}), ("py-b", {"app": "py", "tier": "b"})]:
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels)))
    lst = v1.list_namespaced_config_map(ns, label_selector="app=py")
    out["list_app_py"] = sorted(c.metadata.name for c in lst.items)
    out["list_tier_notin"] = sorted(c.metadata.name for c in v1.list_namespaced_config_map(ns, label_selector="app=py,tier notin (a)").items)
    out["list_exists"] = sorted(c.metadata.name for c in v1.list_namespaced_config_map(ns, label_selector="tier").items)
    out["list_kind"] = lst.kind
    out["list_rv"] = lst.metadata.resource_version

    deleted = v1.delete_namespaced_config_map("py-cm", ns)
    out["deleted"] = {"kind": getattr(deleted, "kind", None), "status": getattr(deleted, "status", None)}
    try:
        v1.read_namespaced_config_map("py-cm", ns)
        out["after_delete"] = None
    except ApiException as e:
        out["after_delete"] = status_of(e)

    try:
        v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="Bad_Name")))
        out["invalid"] = None
    except ApiException as e:
        out["invalid"] = status_of(e)

    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
