"""The floor of `gpulint check --live`: the same list calls, made with plain Python.

Each resource live mode reads of a cluster without add-ons (nodes, active pods, quotas,
LimitRanges, PriorityClasses), listed one after the other in pages of `--page` objects with
`urllib` and the C JSON parser, every item kept. Only the server and token of the kubeconfig
(as bench/serve_cluster.py writes it) are read.

Usage: python bench/list_floor.py KUBECONFIG [--page 5000]
"""

from __future__ import annotations

import argparse
import gc
import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ACTIVE_PODS = "status.phase!=Succeeded,status.phase!=Failed"
CALLS = (
    ("/api/v1/nodes", ()),
    ("/api/v1/pods", (("fieldSelector", ACTIVE_PODS),)),
    ("/api/v1/resourcequotas", ()),
    ("/api/v1/limitranges", ()),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", ()),
)


def list_all(server: str, token: str, path: str, query: tuple, page: int) -> list[Any]:
    """Every item of one list call, page by page."""
    items: list[Any] = []
    token_ = ""
    while True:
        params = [*query, ("limit", str(page)), *((("continue", token_),) if token_ else ())]
        url = f"{server}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request) as answer:
            body = json.loads(answer.read())
        items += body.get("items") or ()
        token_ = (body.get("metadata") or {}).get("continue") or ""
        if not token_:
            return items


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kubeconfig", type=Path)
    parser.add_argument("--page", type=int, default=5000)
    args = parser.parse_args()
    gc.disable()  # as the gpulint console script does: the floor is not the collector's
    config = json.loads(args.kubeconfig.read_text(encoding="utf-8"))
    server = config["clusters"][0]["cluster"]["server"]
    token = config["users"][0]["user"]["token"]
    found = [list_all(server, token, path, query, args.page) for path, query in CALLS]
    print(sum(len(f) for f in found))


if __name__ == "__main__":
    main()
