#!/bin/sh
# The demo behind `make demo`: build a memory repository from the example
# conversation with the offline defaults, then show what is in it and where it came from.
set -eu
DEMO=${1:-demo-memory}
here=$(cd "$(dirname "$0")" && pwd)

rm -rf "$DEMO"
memrepo init "$DEMO"
cd "$DEMO"

echo
echo "== Remembering a few facts (one commit each) =="
memrepo remember "Mia lives in Kyoto; she moved from Lisbon in 2023." --type core --label human
memrepo remember "Mia bought a Suica card at Tokyo Station for 5,000 yen." --type episodic \
    --event-time 2023-05-02 --mention-time 2023-05-02T14:03:00+09:00 --actor Mia
memrepo remember "Mia plans to climb Mount Fuji on August 12 by the Yoshida trail." --type episodic \
    --event-time 2023-08-12 --status planned --mention-time 2023-06-14T21:02:00+09:00 --actor Mia
memrepo remember "Jonas's dog is a three-year-old greyhound named Pixel." --type semantic \
    --mention-time 2023-05-09T19:40:00+09:00 --actor Jonas

echo
echo "== What is in the repository =="
memrepo list
echo
echo "== One record, as a file in Git =="
first=$(memrepo list --type episodic --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
memrepo show "$first"
echo
echo "== History (git log) =="
memrepo log
echo
memrepo doctor
echo
echo "The memory repository is in $(pwd): plain files in Git (try: git -C $DEMO log --stat)."
