#!/usr/bin/env bash
# Install Debian's Chromium for the viewer's browser test (tests/test_viewer_browser.py).
# Playwright's Python package drives /usr/bin/chromium; no browser is ever downloaded
# by Playwright itself. Best effort: without Chromium the browser test skips, saying why.
set -u
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_chromium: no apt-get here; the viewer's browser test will be skipped" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
        echo "install_chromium: not root and no sudo; the viewer's browser test will be skipped" >&2
        exit 0
    fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } >/tmp/install_chromium.log 2>&1; then
    echo "install_chromium: apt-get install chromium failed (see /tmp/install_chromium.log); the browser test will be skipped" >&2
fi
exit 0
