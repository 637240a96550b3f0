#!/usr/bin/env bash
# `swift build --product PosternAuth` on a clean tree builds the client and the wire module and
# nothing else: no C bridge (CCurl, COpenSSL, CSQLite, CMicroHTTPD, CIDN2, CPhoneNumbers), no server module.
# Checked two ways: the package's own description (the target's transitive dependencies), and
# the verbose build log of a clean build in a copy of the tree (the modules actually compiled,
# and no C library linked or its headers searched).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python="${POSTERN_PYTHON:-python3}"
work=$(mktemp -d /tmp/postern-client-graph.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A clean tree: the sources as they are now, without .build.
(cd "$root" && tar --exclude=./.build --exclude=./.venv --exclude=./bench/out -cf - .) | (cd "$work" && tar -xf -)
cd "$work"

swift package describe --type json >describe.json
"$python" - describe.json <<'PY'
import json, sys
targets = {t["name"]: t for t in json.load(open(sys.argv[1]))["targets"]}
def closure(name, seen=None):
    seen = set() if seen is None else seen
    for dep in targets[name].get("target_dependencies", []):
        if dep not in seen:
            seen.add(dep)
            closure(dep, seen)
    return seen
deps = closure("PosternAuth")
assert deps == {"PosternAPI"}, f"PosternAuth depends on {sorted(deps)}"
demo = closure("PosternDemo")
assert demo == {"PosternAuth", "PosternAPI"}, f"the example app depends on {sorted(demo)}"
print("package graph: PosternAuth -> PosternAPI only; PosternDemo -> PosternAuth, PosternAPI")
PY

swift build --product PosternAuth -v >build.log 2>&1 || { tail -40 build.log; echo "FAIL: swift build --product PosternAuth"; exit 1; }
# (The manifest itself is compiled as module "main": its line names Package.swift.)
modules=$(grep -v 'Package.swift' build.log | grep -oE -- '-module-name [A-Za-z0-9_]+' | awk '{print $2}' | sort -u | tr '\n' ' ')
echo "modules compiled: $modules"
for module in $modules; do
  case "$module" in
    PosternAuth|PosternAPI) ;;
    *) echo "FAIL: the client build compiled $module"; exit 1 ;;
  esac
done
case " $modules " in *" PosternAuth "*) ;; *) echo "FAIL: PosternAuth was not compiled (log format changed?)"; exit 1 ;; esac
for bridge in CCurl COpenSSL CSQLite CMicroHTTPD CIDN2 CPhoneNumbers; do
  if grep -q -- "Sources/$bridge" build.log; then echo "FAIL: the client build touched $bridge"; exit 1; fi
done
for library in -lcurl -lcrypto -lssl -lsqlite3 -lmicrohttpd -lidn2 -lphonenumber -lstdc++; do
  if grep -qw -- "$library" build.log; then echo "FAIL: the client build links $library"; exit 1; fi
done
[ -d .build/debug/CCurl.build ] && { echo "FAIL: a C bridge was built"; exit 1; }
echo "client-graph: ok (built PosternAuth alone on a clean tree; no C bridge, no server module)"
