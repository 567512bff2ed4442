#!/usr/bin/env bash
# Build Podium's MLE-bench agent image from this checkout (see README.md in this folder).
#
#   agents/podium/build.sh [--mlebench DIR] [--tag podium] [--wheelhouse] [-- DOCKER_BUILD_ARGS...]
#
# 1. builds Podium's wheel from this checkout into agents/podium/dist/ (the Dockerfile installs
#    it: nothing is fetched from git); --wheelhouse also puts every dependency's wheel there, so
#    the image builds with --build-arg PIP_OFFLINE=true and no package index;
# 2. with --mlebench DIR, copies this folder to DIR/agents/podium, where MLE-bench's harness
#    finds its config.yaml (run_agent.py --agent-id podium ...);
# 3. builds the image `podium` (the harness runs the image named after the agent's folder) on
#    MLE-bench's base image mlebench-env, which must exist (MLE-bench's README:
#    docker build --platform=linux/amd64 -t mlebench-env -f environment/Dockerfile .).
#    --no-docker stops after 1 and 2.

set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
mlebench=""
tag="podium"
wheelhouse=""
docker_build=1
while [ $# -gt 0 ]; do
	case "$1" in
	--mlebench) mlebench="$2" && shift 2 ;;
	--tag) tag="$2" && shift 2 ;;
	--wheelhouse) wheelhouse=1 && shift ;;
	--no-docker) docker_build="" && shift ;;
	--) shift && break ;;
	-h | --help) sed -n '2,15p' "$0" && exit 0 ;;
	*) echo "error: unknown argument $1" >&2 && echo "hint: $0 --help" >&2 && exit 2 ;;
	esac
done

python="${PYTHON:-$repo/.venv/bin/python}"
[ -x "$python" ] || python="$(command -v python3)"

rm -rf "$here/dist"
mkdir -p "$here/dist"
echo "building Podium's wheel from $repo" >&2
[ -e "$repo/build" ] && had_build=1 || had_build=""
"$python" -m pip wheel --quiet --no-deps --wheel-dir "$here/dist" "$repo"
[ -n "$had_build" ] || rm -rf "$repo/build" # setuptools' scratch, left in the checkout
if [ -n "$wheelhouse" ]; then
	# for this interpreter's platform: the image's conda Python is CPython 3.11 on linux x86_64
	echo "collecting the dependencies' wheels for $("$python" -c 'import sys; print(sys.version.split()[0])')" >&2
	"$python" -m pip wheel --quiet --wheel-dir "$here/dist" "$here"/dist/podium-*.whl
fi

context="$here"
if [ -n "$mlebench" ]; then
	[ -d "$mlebench/agents" ] || { echo "error: $mlebench has no agents/ folder" >&2 &&
		echo "hint: --mlebench takes a checkout of https://github.com/openai/mle-bench" >&2 && exit 2; }
	rm -rf "$mlebench/agents/podium"
	cp -r "$here" "$mlebench/agents/podium"
	context="$mlebench/agents/podium"
	echo "copied to $context" >&2
fi

[ -n "$docker_build" ] || exit 0
# the same values as MLE-bench's agents/.shared_env
docker build --platform=linux/amd64 -t "$tag" "$context" \
	--build-arg SUBMISSION_DIR=/home/submission --build-arg LOGS_DIR=/home/logs \
	--build-arg CODE_DIR=/home/code --build-arg AGENT_DIR=/home/agent "$@"
