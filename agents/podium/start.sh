#!/usr/bin/env bash
# Podium as an MLE-bench agent: what MLE-bench's harness runs in the competition's container
# (`bash $AGENT_DIR/start.sh [key=value ...]`, as user nonroot; see agents/podium/README.md).
#
# The contract, inputs first (every path can be overridden, so the script also runs outside
# Docker against a simulated /home, which is how tests/agents/test_start_sh.py runs it):
#   PODIUM_HOME       root of the harness's layout, default /home; the defaults below live in it
#   DATA_DIR          the competition, read-only: description.md + the public files ($PODIUM_HOME/data)
#   INSTRUCTIONS      the harness's rules for agents ($PODIUM_HOME/instructions.txt, or
#                     instructions_obfuscated.txt with OBFUSCATE=true where it exists)
#   TIME_LIMIT_SECS   the run's wall clock (default 86400), STEP_LIMIT its nodes (default 500)
#   OBFUSCATE         "true": the obfuscated description and instructions
#   SANDBOX           bwrap | container | local; default: bwrap when `podium sandbox check`
#                     says it works here, else container (the container is the boundary)
#   HARDWARE          what the prompt says the machine is (default: nvidia-smi's GPUs, the CPUs
#                     and the memory this container may use)
#   PRESET            Podium's config preset (default mlebench-reference: MLE-bench's budget
#                     and reference machine; a `preset=...` argument overrides it)
#   PODIUM            the podium command (default: `podium` from conda env $CONDA_ENV=agent,
#                     or from PATH where there is no conda)
#   SOLUTION_PYTHON   the solutions' interpreter, when it is not Podium's (the Dockerfile sets it
#                     when Podium has an env of its own: the solutions keep MLE-bench's env)
#   key=value args    config overrides, passed as -o key=value (config.yaml's kwargs); other
#                     arguments (--model X) are passed to `podium run` as they are
# and its outputs:
#   SUBMISSION_DIR/submission.csv   the run's best submission (a node Podium judged valid);
#                                   absent when it found none
#   CODE_DIR/solution.py            that node's code
#   LOGS_DIR/                       agent.log (the console, the tree, every node's code and
#                                   output), journal.sqlite, config.toml, summary.json (the
#                                   stamp: sandbox, sandbox_detail, sandboxed), run.html (the
#                                   viewer's offline page), calls.jsonl, sandbox_check.txt
#   AGENT_DIR/run/                  the whole run directory (not collected by the harness)
#
# Time: Podium gets --time a reserve under TIME_LIMIT_SECS (5%, 30 s to 15 min), is sent
# SIGTERM a third of the reserve before the limit (it stops, marking nodes in flight
# interrupted) and SIGKILL at the limit. Whatever ends it (its budget, a crash, a timeout, a
# SIGTERM or SIGINT to this script), the exit trap copies the best submission found so far:
# Podium keeps best/ in its run directory current after every node.

set -uo pipefail

log() { printf 'podium-agent: %s\n' "$*" >&2; }
die() {
	log "error: $1"
	[ -n "${2:-}" ] && log "hint: $2"
	exit 2
}

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
home="${PODIUM_HOME:-/home}"
unset PODIUM_HOME # Podium reads PODIUM_* variables as config keys (this one is reserved anyway)
data_dir="${DATA_DIR:-$home/data}"
submission_dir="${SUBMISSION_DIR:-$home/submission}"
logs_dir="${LOGS_DIR:-$home/logs}"
code_dir="${CODE_DIR:-$home/code}"
agent_dir="${AGENT_DIR:-$home/agent}"
run_dir="${RUN_DIR:-$agent_dir/run}"
time_limit="${TIME_LIMIT_SECS:-86400}"
step_limit="${STEP_LIMIT:-500}"
obfuscate="${OBFUSCATE:-false}"
instructions="${INSTRUCTIONS:-$home/instructions.txt}"
if [ "$obfuscate" = "true" ] && [ -z "${INSTRUCTIONS:-}" ] && [ -f "$home/instructions_obfuscated.txt" ]; then
	instructions="$home/instructions_obfuscated.txt"
fi

case "$time_limit" in '' | *[!0-9]*) die "TIME_LIMIT_SECS=$time_limit is not a number of seconds" "e.g. TIME_LIMIT_SECS=86400" ;; esac
case "$step_limit" in '' | *[!0-9]*) die "STEP_LIMIT=$step_limit is not a number of steps" "e.g. STEP_LIMIT=500" ;; esac
[ "$time_limit" -gt 0 ] || die "TIME_LIMIT_SECS must be above 0"
[ "$step_limit" -gt 0 ] || die "STEP_LIMIT must be above 0"
[ -d "$data_dir" ] || die "no competition data at $data_dir" "the harness mounts it at /home/data; elsewhere set DATA_DIR or PODIUM_HOME"
mkdir -p "$submission_dir" "$logs_dir" "$code_dir" "$agent_dir" || die "cannot create the output folders"

# --- Podium itself: conda's env "agent" in MLE-bench's image, else whatever PATH has -----------
if [ -z "${PODIUM:-}" ] && command -v conda >/dev/null 2>&1; then
	set +u # conda's activation scripts read unset variables
	if eval "$(conda shell.bash hook 2>/dev/null)" && conda activate "${CONDA_ENV:-agent}"; then
		log "conda env ${CONDA_ENV:-agent}"
	else
		log "conda env ${CONDA_ENV:-agent} could not be activated; using podium from PATH"
	fi
	set -u
fi
read -r -a podium <<<"${PODIUM:-podium}"
command -v "${podium[0]}" >/dev/null 2>&1 || die "podium not found (${podium[0]})" "install Podium in this environment, or set PODIUM=/path/to/podium"

# --- the machine, for the prompt and the per-kernel memory limit --------------------------------
gpus=""
if command -v nvidia-smi >/dev/null 2>&1 && names="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" && [ -n "$names" ]; then
	gpus="$(printf '%s\n' "$names" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//' | sort | uniq -c |
		awk '{n = $1; $1 = ""; sub(/^ /, ""); printf "%s%s %s", (NR > 1 ? ", " : ""), n, $0}')"
fi

cpu_count() { # the CPU quota of this container when it has one (MLE-bench sets nano_cpus), else nproc
	local quota period
	if [ -r /sys/fs/cgroup/cpu.max ] && read -r quota period </sys/fs/cgroup/cpu.max && [ "$quota" != max ]; then
		echo $(((quota + period - 1) / period))
	elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] && quota="$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us)" &&
		[ "$quota" -gt 0 ] 2>/dev/null && period="$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; then
		echo $(((quota + period - 1) / period))
	else
		nproc 2>/dev/null || getconf _NPROCESSORS_ONLN
	fi
}

memory_mib() { # the memory this container may use: the smaller of the machine's and its cgroup's
	local total limit
	total="$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo 2>/dev/null)"
	for file in /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes; do
		if [ -r "$file" ] && limit="$(cat "$file")" && [ "$limit" != max ] && [ "$limit" -gt 0 ] 2>/dev/null; then
			limit=$((limit / 1048576))
			if [ -z "$total" ] || [ "$limit" -lt "$total" ]; then total="$limit"; fi
		fi
	done
	echo "${total:-0}"
}

cpus="$(cpu_count)"
mem_mib="$(memory_mib)"
if [ -z "${HARDWARE:-}" ]; then
	HARDWARE="${cpus} CPUs and $((mem_mib / 1024)) GiB of memory"
	if [ -n "$gpus" ]; then HARDWARE="$gpus (drivers installed), $HARDWARE"; else HARDWARE="$HARDWARE, no GPU"; fi
fi
export HARDWARE

# --- the time budget ----------------------------------------------------------------------------
reserve=$((time_limit / 20))
[ "$reserve" -lt 30 ] && reserve=30
[ "$reserve" -gt 900 ] && reserve=900
[ "$reserve" -gt $((time_limit / 2)) ] && reserve=$((time_limit / 2))
budget=$((time_limit - reserve))
grace=$((reserve / 3))
[ "$grace" -lt 1 ] && grace=1
hard=$((time_limit - grace))
[ "$hard" -lt "$budget" ] && hard="$budget"
plural() { if [ "$1" -eq 1 ]; then echo "1 $2"; else echo "$1 ${2}s"; fi; }
hours=$((time_limit / 3600))
minutes=$(((time_limit % 3600) / 60))
TIME_LIMIT=""
[ "$hours" -gt 0 ] && TIME_LIMIT="$(plural "$hours" hour)"
[ "$minutes" -gt 0 ] && TIME_LIMIT="${TIME_LIMIT:+$TIME_LIMIT }$(plural "$minutes" minute)"
[ -n "$TIME_LIMIT" ] || TIME_LIMIT="$(plural "$time_limit" second)"
export TIME_LIMIT STEP_LIMIT="$step_limit"

# --- the rules the prompt carries: the harness's instructions, then this agent's notes ----------
if [ -f "$instructions" ]; then
	notes="$(cat "$here/notes.txt" 2>/dev/null || true)"
	# shellcheck disable=SC2016 # the placeholders are literal text of notes.txt
	notes="${notes//'${HARDWARE}'/"$HARDWARE"}"
	# shellcheck disable=SC2016
	notes="${notes//'${TIME_LIMIT}'/"$TIME_LIMIT"}"
	# shellcheck disable=SC2016
	notes="${notes//'${STEP_LIMIT}'/"$step_limit"}"
	{
		cat "$instructions"
		[ -n "$notes" ] && printf '\n\n%s\n' "$notes"
	} >"$agent_dir/instructions.txt"
	export MLEBENCH_INSTRUCTIONS="$agent_dir/instructions.txt"
else
	log "no instructions at $instructions: the prompt carries no benchmark rules"
fi

# --- isolation: bubblewrap where it works here, else the container is the boundary ---------------
sandbox="${SANDBOX:-}"
if [ -z "$sandbox" ]; then
	check_flags=()
	[ -n "$gpus" ] && check_flags=(--gpus all)
	"${podium[@]}" sandbox check ${check_flags[@]+"${check_flags[@]}"} >"$logs_dir/sandbox_check.txt" 2>&1
	if tail -n 1 "$logs_dir/sandbox_check.txt" | grep -q -- '-> bwrap$'; then
		sandbox=bwrap
	else
		sandbox=container
	fi
fi
log "sandbox $sandbox; $HARDWARE; $step_limit steps, ${budget} s of ${time_limit} s"

# --- the run -----------------------------------------------------------------------------------
args=(run "$data_dir" --out "$run_dir" --preset "${PRESET:-mlebench-reference}"
	--steps "$step_limit" --time "${budget}s" --sandbox "$sandbox")
[ "$mem_mib" -gt 4096 ] && args+=(-o "sandbox.memory=$((mem_mib - (mem_mib / 10 > 2048 ? mem_mib / 10 : 2048)))M")
[ "$obfuscate" = "true" ] && args+=(--obfuscated-description)
[ -n "${SOLUTION_PYTHON:-}" ] && args+=(-o "sandbox.python=$SOLUTION_PYTHON")
for arg in "$@"; do
	case "$arg" in
	-*) args+=("$arg") ;;
	*=*) args+=(-o "$arg") ;;
	*) args+=("$arg") ;;
	esac
done

podium_pid=""
finished=""
# shellcheck disable=SC2317 # called by the traps below
stop() {
	log "got SIG$1: stopping Podium (nodes in flight are marked interrupted; best/ stays)"
	[ -n "$podium_pid" ] && kill -TERM "$podium_pid" 2>/dev/null
}

collect() { # the harness's outputs, from whatever the run dir holds now
	[ -n "$finished" ] && return
	finished=1
	trap - TERM INT
	local best="$run_dir/best"
	if [ -f "$best/submission.csv" ]; then
		cp "$best/submission.csv" "$submission_dir/.submission.csv.tmp" &&
			mv -f "$submission_dir/.submission.csv.tmp" "$submission_dir/submission.csv" &&
			log "submission: $submission_dir/submission.csv (node $(sed -n 's/.*"node_id": *\([0-9]*\).*/\1/p' "$best/node.json" 2>/dev/null))"
	else
		log "no submission: Podium found no valid one"
	fi
	[ -f "$best/solution.py" ] && cp "$best/solution.py" "$code_dir/solution.py"
	[ -f "$best/node.json" ] && cp "$best/node.json" "$logs_dir/best.json"
	for name in config.toml summary.json grade.json journal.sqlite journal.sqlite-wal journal.sqlite-shm; do
		[ -f "$run_dir/$name" ] && cp "$run_dir/$name" "$logs_dir/$name"
	done
	if [ -f "$run_dir/journal.sqlite" ]; then
		"${podium[@]}" view "$run_dir" --export "$logs_dir/run.html" >/dev/null 2>>"$logs_dir/agent.log" ||
			log "the viewer's export failed (see agent.log)"
		"${podium[@]}" calls export "$run_dir" >"$logs_dir/calls.jsonl" 2>>"$logs_dir/agent.log"
		{
			printf '\n===== podium show %s\n' "$run_dir"
			"${podium[@]}" show "$run_dir" 2>&1
			for node in "$run_dir"/nodes/*/; do
				[ -f "$node/solution.py" ] || continue
				printf '\n===== node %s: solution.py\n' "$(basename "$node")"
				cat "$node/solution.py"
				printf '\n===== node %s: output\n' "$(basename "$node")"
				cat "$node/output.txt" 2>/dev/null
			done
		} >>"$logs_dir/agent.log"
	fi
}
trap 'stop TERM' TERM
trap 'stop INT' INT
trap collect EXIT

log "running: ${podium[*]} ${args[*]}"
exec {console}> >(tee -a "$logs_dir/agent.log") # the console, on stdout and in agent.log
tee_pid=$!
timeout --signal=TERM --kill-after="$grace" "$hard" "${podium[@]}" "${args[@]}" >&"$console" 2>&1 &
podium_pid=$!
while :; do
	wait "$podium_pid"
	rc=$?
	kill -0 "$podium_pid" 2>/dev/null || break # a trapped signal ended the wait, not Podium
done
exec {console}>&-
wait "$tee_pid" 2>/dev/null
[ "$rc" -eq 124 ] && log "timed out after $hard s (TIME_LIMIT_SECS=$time_limit)"
collect
exit "$rc"
