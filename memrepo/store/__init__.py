"""Git storage (dulwich lives here and nowhere else)."""
