"""The participant's pages (the private link, /p/<token>/) and their URLs."""
