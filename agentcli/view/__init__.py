"""``agentgym view``: a local web page over runs, episodes and corrections.

``source`` reads what PATH is (a run, an eval or rollout folder, a JSONL file) and finds its
files; ``index`` indexes a file in one streaming pass so a page reads only its own records;
``pages`` builds what each page shows; ``server`` serves the page and that data on loopback;
``export`` writes the same page as static files; ``static/`` holds the page itself.
"""
