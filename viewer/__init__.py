"""The Streamlit viewer (see issue: viewer)."""
