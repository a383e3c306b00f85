"""Entry script of the memrepo viewer: ``memrepo view`` runs ``streamlit run`` on this file.

Each page is a module beside this one (overview, memories, graph, recall, history)
whose page function runs when Streamlit executes it.
"""

import streamlit as st

from viewer import common

# An emoji icon is drawn in the browser (a data: URL); a :material/...: page icon would be
# fetched from a third-party font host, and the viewer never contacts anything but itself.
st.set_page_config(page_title="memrepo viewer", page_icon="🗂️", layout="wide")

PAGES = [
    st.Page("overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page("memories.py", title="Memories", icon=":material/description:"),
    st.Page("graph.py", title="Graph", icon=":material/hub:"),
    st.Page("recall.py", title="Recall", icon=":material/search:"),
    st.Page("history.py", title="History", icon=":material/history:"),
    st.Page("review.py", title="Review", icon=":material/rate_review:"),
]

navigation = st.navigation(PAGES)
with common.READ_LOCK:
    try:
        common.repo()
    except common.MemrepoError as exc:
        st.title("memrepo viewer")
        st.error(f"Cannot open the memory repository: {common.md(exc)}")
        st.caption("Start the viewer with `memrepo view PATH`, where PATH is a memory repository (see `memrepo init`).")
    else:
        common.sidebar()
        navigation.run()
