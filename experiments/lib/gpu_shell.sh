# experiments/lib/gpu_shell.sh - what the GPU scripts share (sourced by gpu_check.sh and
# gpu_session.sh; docs/gpu.md): their arguments, the import tree that runs the project from this
# source tree without installing it, the log, timed steps, the one-line compile probe and the
# system lines. A script sets SCRIPT (its name) and calls, in order:
#   gpu_args "$@"      --simulated [--tiny] OUTDIR, or OUTDIR: sets SIMULATED, TINY, OUTDIR
#   gpu_setup          REPO, OUT, PY, TMP (removed on exit), the simulated devices or CUDA_PATH and
#                      COMPUTE_MODE, the import tree on PYTHONPATH, the working folder REPO
#   gpu_log FILE       everything printed from here on also goes to FILE (complete on exit)
#   step NAME CMD...   runs CMD, records NAME, its status and seconds in $TMP/steps.md; a failed
#                      step sets status=1 and the script goes on

gpu_usage() {
    echo "usage: bash experiments/$SCRIPT [--simulated [--tiny]] OUTDIR" >&2
    exit 2
}

gpu_args() {
    SIMULATED=0
    TINY=0
    while [ $# -gt 1 ]; do
        case "$1" in
            --simulated) SIMULATED=1 ;;
            --tiny) TINY=1 ;;
            *) gpu_usage ;;
        esac
        shift
    done
    [ $# -eq 1 ] || gpu_usage
    case "$1" in -*) gpu_usage ;; esac
    if [ "$TINY" -eq 1 ] && [ "$SIMULATED" -eq 0 ]; then
        echo "$SCRIPT: --tiny is for --simulated runs" >&2
        exit 2
    fi
    OUTDIR=$1
}

gpu_setup() {
    REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    mkdir -p "$OUTDIR"
    OUT=$(cd "$OUTDIR" && pwd)
    PY=${PYTHON:-python3}
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/metaheur-${SCRIPT%.sh}.XXXXXX")
    TEE_PID=""
    trap gpu_finish EXIT
    if [ "$SIMULATED" -eq 1 ]; then
        export METAHEUR_SIMULATED_GPUS=${METAHEUR_SIMULATED_GPUS:-1}
        [ "$TINY" -eq 1 ] && export METAHEUR_SIMULATED_GPU_SMS=${METAHEUR_SIMULATED_GPU_SMS:-2}
        COMPUTE_MODE="Default (simulated)"
    else
        # CuPy 14 compiles with the CUDA runtime headers (cuda.pathfinder: site-packages, conda,
        # CUDA_PATH): point CUDA_PATH at a toolkit that has them when it is unset
        if [ -z "${CUDA_PATH:-}" ]; then
            for root in "$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /none/bin/nvcc)")")" \
                        /usr/local/cuda /usr/local/cuda-*; do
                if [ -f "$root/include/cuda_runtime.h" ]; then
                    export CUDA_PATH=$root
                    break
                fi
            done
        fi
        # EXCLUSIVE_PROCESS allows one CUDA context per GPU: the precompilation then runs one GPU compile at a time
        COMPUTE_MODE=$(nvidia-smi --query-gpu=compute_mode --format=csv,noheader -i 0 2>/dev/null || echo unknown)
    fi
    # the import tree, no installation: metaheur/* plus problems/ and kernels/ as the setuptools
    # package-dir mapping would install them
    mkdir -p "$TMP/src/metaheur"
    for entry in "$REPO"/metaheur/*; do
        ln -s "$entry" "$TMP/src/metaheur/$(basename "$entry")"
    done
    ln -s "$REPO/problems" "$TMP/src/metaheur/problems"
    ln -s "$REPO/kernels" "$TMP/src/metaheur/kernels"
    export PYTHONPATH="$TMP/src${PYTHONPATH:+:$PYTHONPATH}"
    # The repository root holds a metaheur/ without problems/ and kernels/: never let the current
    # directory (python -c, python -m) shadow the import tree (Python >= 3.11).
    export PYTHONSAFEPATH=1
    export MPLBACKEND=Agg PYTHONUNBUFFERED=1
    cd "$REPO" || exit 2
    status=0
    printf '| step | status | seconds |\n|---|---|---|\n' > "$TMP/steps.md"
}

# On exit: give the log's tee the end of its input and wait until it has written everything, so
# that the log is complete when the script returns; then remove the temporary tree.
gpu_finish() {
    if [ -n "$TEE_PID" ]; then
        exec 1>&3 2>&4 3>&- 4>&-
        wait "$TEE_PID" 2>/dev/null || while kill -0 "$TEE_PID" 2>/dev/null; do sleep 0.1; done
    fi
    rm -rf "$TMP"
}

gpu_log() {
    exec 3>&1 4>&2 > >(tee "$1") 2>&1
    TEE_PID=$!
}

# step NAME COMMAND...: run, time and record a step (its output goes to the log)
step() {
    local name=$1 t0 rc tenths
    shift
    echo "== $(date -u +%H:%M:%S) $name: $*"
    t0=$(date +%s%N)
    "$@"
    rc=$?
    tenths=$(( ($(date +%s%N) - t0) / 100000000 ))
    printf '| %s | %s | %d.%d |\n' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAILED ($rc)")" \
        $((tenths / 10)) $((tenths % 10)) >> "$TMP/steps.md"
    [ $rc -eq 0 ] || status=1
    return $rc
}

# The lines every GPU script's system report starts with; fails when the import tree or the CLI
# does not work or no GPU is visible (exit 3: use --simulated on a machine without one).
system_lines() {
    echo "$SCRIPT on $(hostname) at $(date -Is), repository $REPO"
    echo "git: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
         "$(git -C "$REPO" status --porcelain 2>/dev/null | wc -l) changed files"
    echo "python: $(command -v "$PY") $("$PY" --version 2>&1)"
    echo "C compiler: $( (${CC:-gcc} --version 2>/dev/null || cc --version 2>/dev/null) | head -1 || true)"
    echo "mode: $([ "$SIMULATED" -eq 1 ] && echo "simulated GPUs ($METAHEUR_SIMULATED_GPUS)" || echo "real GPUs")" \
         "$([ "$TINY" -eq 1 ] && echo ", tiny sizes")"
    nvidia-smi 2>&1 || echo "(nvidia-smi not available)"
    echo "compute mode of GPU 0: $COMPUTE_MODE"
    echo "CUDA_PATH: ${CUDA_PATH:-(unset)}"
    "$PY" -c "
import sys, metaheur, metaheur.problems, metaheur.kernels, metaheur.engine
assert metaheur.__file__.startswith(sys.argv[1]), metaheur.__file__
print('import tree:', metaheur.__file__)
" "$TMP/src" || return 1
    "$PY" -m metaheur.cli info || return 1
    compile_probe || return 1
    "$PY" -c "import sys; from metaheur.devices import gpu_devices; sys.exit(0 if gpu_devices() else 3)" ||
        { echo "no GPU visible (use --simulated on a machine without one)"; return 3; }
}

# A one-line kernel compiled and loaded on the first GPU through CuPy's RawModule, before anything
# long: a CuPy that finds no CUDA headers fails here, in words, not 80 compiles later.
compile_probe() {
    "$PY" - <<'PYEOF'
import sys
from metaheur.devices import gpu_devices

gpus = gpu_devices()
if not gpus:
    sys.exit(0)  # the next check says that there is no GPU
cp = gpus[0].cupy
try:
    with cp.cuda.Device(gpus[0].index):
        cp.RawModule(code='extern "C" __global__ void mh_probe(int *x) { x[0] = 1; }\n').get_function("mh_probe")
except Exception as exc:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    if "CUDA headers" in text:
        print("compile probe: CuPy finds no CUDA runtime headers (cuda_runtime.h): install them "
              "(pip install 'cupy-cuda13x[ctk]') or set CUDA_PATH to a CUDA toolkit that has include/; " + text)
    else:
        print(f"compile probe: a one-line kernel does not compile or load on {gpus[0].name}: {text}")
    sys.exit(1)
print(f"compile probe: a one-line kernel compiles and loads on {gpus[0].name}")
PYEOF
}
