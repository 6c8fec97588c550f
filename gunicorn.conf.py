"""Production gunicorn settings: `gunicorn -c gunicorn.conf.py wsgi:app`."""

import multiprocessing
import os

bind = os.environ.get("AUTHFLOW_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("AUTHFLOW_WORKERS", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("AUTHFLOW_THREADS", "2"))
timeout = 60
graceful_timeout = 30
# The access log is written by the app itself as JSON lines with request ids (logs.py);
# gunicorn's would repeat it, with the query string (which may carry codes) included.
accesslog = None
errorlog = "-"
forwarded_allow_ips = os.environ.get("AUTHFLOW_FORWARDED_ALLOW_IPS", "127.0.0.1")
