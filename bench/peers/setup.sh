#!/usr/bin/env bash
# Creates the peer virtual environments of bench/peers from PyPI.
#
#   torch/   torch 2.x (the newest) + jax[cpu]: torch eager, torch.compile,
#            jax.jit
#   xla/     torch_xla 2.9 + the torch it was built against (2.9.0): the
#            PJRT CPU device
#
# usage: bench/peers/setup.sh [--dry-run]
#   --dry-run  prints the interpreters and versions it would install, and
#              installs nothing (it makes a small throwaway venv to ask pip)
#
# Location: ${LT_PEERS_DIR:-$HOME/.cache/lazytensor-peers}. Idempotent: an
# environment whose packages import (and whose torch is the recorded pin,
# for xla/) is left alone, so a second run only checks. jax's newest
# releases need Python >= 3.12: the newest such interpreter found on PATH, in
# /usr/local/bin, /opt or pyenv is used; without one, the system python3
# gets the newest jax that supports it (asked of pip). PyPI's torch wheels
# pull several GB of CUDA libraries; they run on CPU all the same.
# Needs: python3 with venv (Debian: python3-venv), network access to PyPI.
# No pipefail: the version pipelines end in head/awk, which may close early.
set -eu

PEERS_DIR="${LT_PEERS_DIR:-$HOME/.cache/lazytensor-peers}"
XLA_VERSION="${LT_PEERS_XLA_VERSION:-2.9}"
DRY_RUN=0
case "${1:-}" in
    "") ;;
    --dry-run) DRY_RUN=1 ;;
    *) echo "usage: $0 [--dry-run]" >&2; exit 2 ;;
esac

log() { printf '[peers setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "error: $*"; exit 1; }

# ---- interpreters ---------------------------------------------------------------

# Every python3 we can find, one path a line (duplicates are harmless).
candidate_pythons() {
    local name path
    for name in python3.14 python3.13 python3.12 python3.11 python3; do
        command -v "$name" 2>/dev/null || true
    done
    for path in /usr/bin/python3.[0-9]* /usr/local/bin/python3.[0-9]*; do
        case "$path" in *[!0-9]) ;; *) printf '%s\n' "$path" ;; esac # python3.11, not python3.11-config
    done
    ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3 2>/dev/null || true
    ls -d /opt/python*/bin/python3 /opt/python/*/bin/python3 /usr/local/python*/bin/python3 2>/dev/null || true
}

# Interpreters that can create a venv, one per minor version, newest first,
# as "minor path" lines; the path is the interpreter's own (sys.executable),
# so a pyenv shim is replaced by the version it runs.
usable_pythons() {
    local path ver major minor exe
    while read -r path; do
        [ -x "$path" ] || continue
        ver=$("$path" -c 'import sys, venv, ensurepip; print(sys.version_info[0], sys.version_info[1], sys.executable)' \
            2>/dev/null) || continue
        read -r major minor exe <<<"$ver"
        if [ "$major" = 3 ] && [ -x "$exe" ]; then printf '%s %s\n' "$minor" "$exe"; fi
    done < <(candidate_pythons) | sort -s -k1,1nr | awk '!seen[$1]++'
}

# The newest usable interpreter with version >= 3.$1 (empty if none).
newest_python_at_least() {
    usable_pythons | awk -v want="$1" '$1 >= want { print $2; exit }'
}

# "3.13" for an interpreter.
python_minor() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; }

# ---- asking pip -------------------------------------------------------------------
# Every question goes through a venv's pip (the system python3 may have no
# pip), with --python-version so one pip can answer for any interpreter.

# Versions of $2 with wheels for Python $3, newest first, one a line.
pip_versions() {
    local pip_python=$1 package=$2 pyver=$3
    "$pip_python" -m pip index versions "$package" --python-version "$pyver" --only-binary=:all: 2>/dev/null |
        sed -n 's/^Available versions: //p' | tr ',' '\n' | tr -d ' '
}

# The newest of those whose version starts with $4 ("" matches any).
newest_matching() {
    if [ -z "$4" ]; then
        pip_versions "$1" "$2" "$3" | head -n1
    else
        pip_versions "$1" "$2" "$3" | grep -E "^${4//./\\.}(\.|$)" | head -n1
    fi
}

make_venv() {
    local python=$1 dir=$2
    if [ ! -x "$dir/bin/python" ]; then
        log "creating $dir with $python (Python $(python_minor "$python"))"
        "$python" -m venv "$dir" || die "$python -m venv failed (Debian: apt-get install python3-venv)"
        "$dir/bin/python" -m pip install -q --upgrade pip
    fi
}

# ---- the environments ---------------------------------------------------------------

# Prints a version line and succeeds if the environment at $1 is complete.
torch_env_ready() {
    [ -x "$1/bin/python" ] && "$1/bin/python" -c '
import sys, numpy, torch, jax
print("torch", torch.__version__, "jax", jax.__version__, "python", sys.version.split()[0])' 2>/dev/null
}

xla_env_ready() {
    [ -x "$1/bin/python" ] && [ -f "$1/lt-torch-pin" ] && "$1/bin/python" -c '
import sys, torch, torch_xla
if torch.__version__.split("+")[0] != sys.argv[1]:
    sys.exit(1)
print("torch", torch.__version__, "torch_xla", torch_xla.__version__, "python", sys.version.split()[0])' \
        "$(cat "$1/lt-torch-pin")" 2>/dev/null
}

# Sets TORCH_PY and JAX_VERSION for the torch+jax environment.
plan_torch_jax() {
    local pip_python=$1
    TORCH_PY=$(newest_python_at_least 12)
    if [ -z "$TORCH_PY" ]; then
        TORCH_PY=$(newest_python_at_least 0)
        [ -n "$TORCH_PY" ] || die "no python3 with venv found (Debian: apt-get install python3-venv)"
        log "no Python >= 3.12 found: $TORCH_PY gets the newest jax it supports"
    fi
    JAX_VERSION=$(newest_matching "$pip_python" jax "$(python_minor "$TORCH_PY")" "")
    [ -n "$JAX_VERSION" ] || die "pip lists no jax for Python $(python_minor "$TORCH_PY") (is PyPI reachable?)"
}

# torch_xla has wheels for a few Python versions only: the newest interpreter
# it has the wanted release for. Its wheel does not declare the torch it was
# built against: that is the torch of the same version (2.9.0 for 2.9.0),
# else the newest patch release of the same minor version. Sets XLA_PY,
# XLA_PKG_VERSION and XLA_TORCH_VERSION.
plan_xla() {
    local pip_python=$1 candidate pyver
    XLA_PY=""
    while read -r candidate; do
        pyver=$(python_minor "$candidate")
        XLA_PKG_VERSION=$(newest_matching "$pip_python" torch-xla "$pyver" "$XLA_VERSION")
        if [ -n "$XLA_PKG_VERSION" ]; then XLA_PY=$candidate; break; fi
    done < <(usable_pythons | cut -d' ' -f2-)
    [ -n "$XLA_PY" ] || die "no interpreter here has a torch_xla $XLA_VERSION wheel on PyPI"
    XLA_TORCH_VERSION=$(newest_matching "$pip_python" torch "$pyver" "$XLA_PKG_VERSION")
    [ -n "$XLA_TORCH_VERSION" ] || XLA_TORCH_VERSION=$(newest_matching "$pip_python" torch "$pyver" "$XLA_VERSION")
    [ -n "$XLA_TORCH_VERSION" ] || die "pip lists no torch $XLA_VERSION for Python $pyver"
}

setup_torch_jax() {
    local dir="$PEERS_DIR/torch" line
    if line=$(torch_env_ready "$dir"); then
        log "torch+jax environment ready: $line"
        return
    fi
    choose_pip_python
    plan_torch_jax "$PIP_PYTHON"
    make_venv "$TORCH_PY" "$dir"
    log "installing torch (newest) and jax[cpu]==$JAX_VERSION into $dir (several GB)"
    "$dir/bin/python" -m pip install --progress-bar off torch "jax[cpu]==$JAX_VERSION" numpy
    line=$(torch_env_ready "$dir") || die "torch or jax does not import in $dir"
    log "torch+jax environment ready: $line"
}

setup_xla() {
    local dir="$PEERS_DIR/xla" line
    if line=$(xla_env_ready "$dir"); then
        log "torch_xla environment ready: $line"
        return
    fi
    choose_pip_python
    plan_xla "$PIP_PYTHON"
    make_venv "$XLA_PY" "$dir"
    log "installing torch_xla==$XLA_PKG_VERSION and torch==$XLA_TORCH_VERSION into $dir (several GB)"
    "$dir/bin/python" -m pip install --progress-bar off "torch_xla==$XLA_PKG_VERSION" \
        "torch==$XLA_TORCH_VERSION" numpy
    printf '%s\n' "$XLA_TORCH_VERSION" >"$dir/lt-torch-pin"
    line=$(xla_env_ready "$dir") || die "torch_xla does not import in $dir"
    log "torch_xla environment ready: $line"
}

# Sets PIP_PYTHON to a venv whose pip answers the version questions: the
# torch environment's once it exists, else a small throwaway one (PROBE_DIR,
# removed on exit).
choose_pip_python() {
    PIP_PYTHON="$PEERS_DIR/torch/bin/python"
    if [ -x "$PIP_PYTHON" ] && "$PIP_PYTHON" -m pip --version >/dev/null 2>&1; then
        return
    fi
    local first
    first=$(newest_python_at_least 0)
    [ -n "$first" ] || die "no python3 with venv found (Debian: apt-get install python3-venv)"
    if [ -z "$PROBE_DIR" ]; then
        PROBE_DIR=$(mktemp -d)
        "$first" -m venv "$PROBE_DIR/venv" >/dev/null || die "$first -m venv failed"
        "$PROBE_DIR/venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    fi
    PIP_PYTHON="$PROBE_DIR/venv/bin/python"
}

dry_run() {
    log "interpreters found (minor version, path):"
    usable_pythons | sed 's/^/    3./'
    plan_torch_jax "$PIP_PYTHON"
    log "torch/ would use $TORCH_PY (Python $(python_minor "$TORCH_PY")): torch (newest) + jax[cpu]==$JAX_VERSION"
    plan_xla "$PIP_PYTHON"
    log "xla/ would use $XLA_PY (Python $(python_minor "$XLA_PY")): torch_xla==$XLA_PKG_VERSION + torch==$XLA_TORCH_VERSION"
}

main() {
    local start
    start=$(date +%s)
    log "peer environments under $PEERS_DIR"
    PROBE_DIR=""
    trap '[ -z "$PROBE_DIR" ] || rm -rf "$PROBE_DIR"' EXIT
    if [ "$DRY_RUN" = 1 ]; then
        choose_pip_python
        dry_run
        return
    fi
    mkdir -p "$PEERS_DIR"
    setup_torch_jax
    setup_xla
    log "done in $(($(date +%s) - start)) s; disk use: $(du -sh "$PEERS_DIR" | cut -f1)"
}

main
