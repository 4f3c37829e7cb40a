#!/usr/bin/env bash
# Nightly PubMed sync of one collection, for cron: quiet unless something is wrong.
#
#   scripts/nightly.sh COLLECTION QUERY [more `fastbmrag sync` options...]
#
# Runs `fastbmrag sync --quiet --strict` and appends its log lines to a log file
# (--strict: records fetched but unusable make the exit code 1, so cron shows them). Prints
# nothing when the sync succeeds (so cron sends no mail) and the sync's own
# output when it does not; exits with the sync's exit code:
#   0 ok, 1 some papers failed (retried next run) or were unusable, 2 cannot start,
#   3 locked (the previous run still holds the collection), 70 internal error, 130 interrupted.
#
# Environment (cron starts with almost none; set these in the crontab):
#   FASTBMRAG_VENV   virtualenv to activate (its bin/activate), if fastbmrag lives in one
#   FASTBMRAG_LOG    log file [default: $FASTBMRAG_HOME/logs/sync-COLLECTION.log]
#   FASTBMRAG_HOME   where collections live [default: ~/.fastbmrag]
#   NCBI_EMAIL       your contact email for NCBI (required), NCBI_API_KEY (optional)
#   FASTBMRAG_DIGEST write what the sync changed to this file (`sync --digest`; its suffix
#                    .md/.html/.json chooses the format), replaced by each run
#   OLLAMA_HOST, FASTBMRAG_LLM_MODEL, ... as for every fastbmrag command
set -u

if [ "$#" -lt 2 ]; then
    echo "usage: $0 COLLECTION QUERY [fastbmrag sync options...]" >&2
    exit 2
fi
collection=$1
query=$2
shift 2

if [ -n "${FASTBMRAG_VENV:-}" ]; then
    if [ ! -f "$FASTBMRAG_VENV/bin/activate" ]; then
        echo "nightly.sh: FASTBMRAG_VENV=$FASTBMRAG_VENV has no bin/activate" >&2
        exit 2
    fi
    # shellcheck disable=SC1091
    . "$FASTBMRAG_VENV/bin/activate"
fi
if command -v fastbmrag >/dev/null 2>&1; then
    run=(fastbmrag)
else
    run=(python3 -m fastbmrag)
fi

home=${FASTBMRAG_HOME:-$HOME/.fastbmrag}
log=${FASTBMRAG_LOG:-$home/logs/sync-$collection.log}
mkdir -p "$(dirname "$log")" || exit 2

digest=()
if [ -n "${FASTBMRAG_DIGEST:-}" ]; then
    digest=(--digest "$FASTBMRAG_DIGEST")
fi
out=$("${run[@]}" sync --collection "$collection" --query "$query" \
    --quiet --strict --log-file "$log" "${digest[@]}" "$@" 2>&1)
rc=$?
if [ "$rc" -ne 0 ]; then
    printf '%s\n' "$out" >&2
    printf '%s nightly.sh: sync of %s exited %d: %s\n' \
        "$(date '+%Y-%m-%d %H:%M:%S')" "$collection" "$rc" "${out//$'\n'/ | }" >>"$log"
fi
exit "$rc"
