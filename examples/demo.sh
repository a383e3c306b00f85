#!/bin/sh
# The demo behind `make demo`: build a memory repository from the example
# conversation with the offline defaults (no model, no network), then show what is
# in it and where each piece came from.
set -eu
DEMO=${1:-demo-memory}
here=$(cd "$(dirname "$0")" && pwd)
step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

rm -rf "$DEMO"
memrepo init "$DEMO"
cd "$DEMO"

step "Ingest the example conversation (kept verbatim under sources/, one commit per session)"
memrepo ingest "$here/conversation.txt"

step "A core block, edited in place"
memrepo remember "Mia is a designer at Corvo Design; she moved from Lisbon to Kyoto in 2023." --type core --label human

step "What is in the repository"
memrepo list --type semantic
echo "... and $(memrepo list --type episodic --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') episodic records (memrepo list --type episodic)"

step "One record, and the source turn it came from"
rid=$(memrepo list --type semantic --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
memrepo show "$rid"

step "The provenance hypergraph: frames that mention Pixel"
memrepo graph frames --anchor Pixel | head -20

step "Search (full text + vectors)"
memrepo search "ramen in Ueno" -k 3

step "Recall: bounded evidence, every fact citing its records"
memrepo recall "When is Mia planning to climb Mount Fuji?"

step "Ask (offline: an extractive answer from the evidence)"
memrepo ask "What is the name of Jonas's dog?"

step "AutoDream: duplicate anchors proposed as a review branch (a run with nothing to review is recorded on main)"
memrepo dream --final
memrepo review list

step "Procedural AutoDream: five agent task sessions (buying things online, some failed) become a skill proposal"
memrepo ingest "$here/task-sessions.jsonl"   # the fifth pending session proposes skills on its own
memrepo review list
branch=$(memrepo review list --json | python3 -c 'import json,sys; print([r["branch"] for r in json.load(sys.stdin) if r["branch"].startswith("dream/skills-")][0])')
memrepo review show "$branch" | head -40
memrepo review approve "$branch"
memrepo skills export agent-skills

step "History (plain Git) and health"
memrepo log -n 5
memrepo doctor

printf '\nThe memory repository is %s: plain files in Git (try: git -C %s log --stat).\n' "$(pwd)" "$DEMO"
printf 'Open it in the viewer with:\n\n    .venv/bin/memrepo view %s\n\n' "$DEMO"
