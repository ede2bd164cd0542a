"""One settings module, driven by environment variables.

Embedded defaults (SQLite, Celery eager) make `make demo` work with nothing but Python;
DATABASE_URL and CELERY_BROKER_URL switch to PostgreSQL and a real broker.
"""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from .celery_backend import result_backend_for
from .env import debug_exposed_hosts, envbool, envhosts, envint, envnetworks, envstr, envurl

BASE_DIR = Path(__file__).resolve().parent.parent

# Off unless asked for: the debug pages show settings and tracebacks to whoever triggers an error. `make
# demo`, `make test` (tests/settings.py) and the documented development commands set DEBUG=1.
DEBUG = envbool("DEBUG", False)
SECRET_KEY = envstr("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set in the environment when DEBUG is off (DEBUG is off unless DEBUG=1 is "
            "set; for development on this machine, set DEBUG=1)"
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
ALLOWED_HOSTS = [h for h in envstr("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",") if h]
if DEBUG:
    _exposed = debug_exposed_hosts(ALLOWED_HOSTS)
    if _exposed:
        raise ImproperlyConfigured(
            f"DEBUG=1 with ALLOWED_HOSTS naming hosts beyond this machine ({', '.join(_exposed)}): the debug "
            "pages would show settings and tracebacks to others. Set DEBUG=0 (and SECRET_KEY) for a server "
            "others reach, or keep ALLOWED_HOSTS to loopback names (127.0.0.1, localhost, ::1, testserver)."
        )

# HTTPS and cookie flags: on by default whenever DEBUG is off (`manage.py check --deploy` is clean), each one
# overridable from the environment (docs/security.md). Behind a TLS-terminating proxy that sets
# X-Forwarded-Proto (and strips it from clients), set SECURE_PROXY_SSL_HEADER=1; to serve plain HTTP on
# loopback (a benchmark), SECURE_SSL_REDIRECT=0 and the cookie flags off.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", not DEBUG)
if envbool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", not DEBUG)
CSRF_TRUSTED_ORIGINS = [o for o in envstr("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular_sidecar",
    "rest_framework.authtoken",
    "drf_spectacular",
    "studies",
    "scoring",
    # The project package itself, for its system checks (sessionlab/apps.py, sessionlab/checks.py).
    "sessionlab",
]

MIDDLEWARE = [
    # First, so that every answer carries it, WhiteNoise's static files included (sessionlab/csp.py).
    "sessionlab.csp.ContentSecurityPolicyMiddleware",
    # /health/live and /health/ready, before the host check and the HTTPS redirect that a balancer's probe of
    # a node's own address over HTTP would fail (sessionlab/health.py, docs/deploying.md).
    "sessionlab.health.HealthProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's session, authentication and messages middleware, except on MIDDLEWARE_LEAN_PATHS below.
    "sessionlab.lean_paths.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "sessionlab.lean_paths.AuthenticationMiddleware",
    "sessionlab.lean_paths.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# Whole paths (regular expressions) whose views read no session, user or messages, where the three
# middleware above step aside (sessionlab/lean_paths.py, docs/security.md "Lean paths"): the participant's
# event batches, found by their token, answering JSON. The CSRF check, the host check and every security
# header still apply there. The CSRF token stays in its cookie (CSRF_USE_SESSIONS would need the session).
MIDDLEWARE_LEAN_PATHS = [r"/p/[^/]+/events/"]

# Content-Security-Policy directives that replace the strict defaults of sessionlab/csp.py under a path
# prefix, where a vendored library needs them (docs/security.md says why); scripts stay 'self' everywhere.
CSP_PATH_DIRECTIVES = {
    # Plotly writes <style> elements and style attributes: without this the charts lose titles, legends and
    # the toolbar's layout (docs/security.md).
    "/scoring/": {"style-src": "'self' 'unsafe-inline'"},
    # ReDoc styles itself with styled-components (<style> elements: without them it does not render) and
    # runs its search in a worker made from a blob: URL by its own script.
    "/api/redoc/": {"style-src": "'self' 'unsafe-inline'", "worker-src": "'self' blob:"},
}

# Where an MTurk participant's completion page may post the HIT (MTurk's externalSubmit): the hosts MTurk
# passes as turkSubmitTo, production and the sandbox. A constant, not an environment variable: anything else
# in turkSubmitTo is refused on arrival (an open redirect for the worker's data otherwise); the page's
# Content-Security-Policy allows form-action to the participant's one host (docs/recruitment.md, "MTurk").
MTURK_SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")

# The only pages that may frame one of ours: MTurk's, which show an ExternalQuestion HIT in a frame. Only the
# MTurk arrival landing (the public link's preview, or an accepted HIT opened inside that frame) gets them as
# its frame-ancestors; every other page keeps 'none' and X-Frame-Options DENY. A constant, never taken from
# the request (docs/security.md, "the one framing exception"; docs/recruitment.md, "MTurk").
MTURK_FRAME_ANCESTORS = (
    "https://www.mturk.com",
    "https://worker.mturk.com",
    "https://workersandbox.mturk.com",
)

# Error reports (DEBUG page, mails to ADMINS) hide passwords inside URL settings too (broker, cache).
DEFAULT_EXCEPTION_REPORTER_FILTER = "sessionlab.reporting.SettingsFilter"

ROOT_URLCONF = "sessionlab.urls"
WSGI_APPLICATION = "sessionlab.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

_database_url = envurl("DATABASE_URL", ("postgres", "postgresql", "sqlite"))
if _database_url:
    DATABASES = {"default": dj_database_url.parse(_database_url, conn_max_age=envint("DB_CONN_MAX_AGE", 60))}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # psycopg prepares a statement on the server after its 5th run on a connection. Only cursors that bind
        # on the server prepare: the events endpoint's plain SQL (sessionlab/plain_sql.py), not the ORM's
        # statements. DB_PREPARED_STATEMENTS=0 turns it off, for a pooler in transaction mode that cannot
        # keep prepared statements (PgBouncer before 1.21, or max_prepared_statements=0).
        DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = (
            5 if envbool("DB_PREPARED_STATEMENTS", True) else None
        )
    # A pooler in transaction mode (PgBouncer) hands each transaction to any server connection, so a named
    # cursor that .iterator() holds open across transactions would be lost: DB_DISABLE_SERVER_SIDE_CURSORS=1
    # makes .iterator() read each query's whole result instead (docs/deploying.md says what that costs).
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = envbool("DB_DISABLE_SERVER_SIDE_CURSORS", False)
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": envstr("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # Concurrent writers (two event batches, the dev server, an eager task) wait instead of failing:
            # a write transaction takes its lock at BEGIN (a deferred one that read first could not wait for
            # it and failed at once with "database is locked"), readers do not block the writer (WAL), and a
            # writer waits up to 20 s for the lock (studies/participation/events/ingest.py then tries a batch
            # again, a few times).
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The participant's event log (studies/participation/events/event_checks.py,
# studies/participation/events/ingest.py, docs/security.md): a client time further than this from the server's
# receive time is kept as raw text only; searches (queries and new result pages) per batch and per participant
# per minute past these caps are answered "retry later".
CLIENT_TIME_WINDOW_SECONDS = envint("CLIENT_TIME_WINDOW_SECONDS", 24 * 3600, minimum=1)
# The search page counts a participant idle after this long without input (pointer, keys, scroll, touch):
# an `attention` span of kind idle, taken out of active time (static/js/participant/attention.js).
ATTENTION_IDLE_SECONDS = envint("ATTENTION_IDLE_SECONDS", 30, minimum=1)
# The agreement page's bootstrap of Krippendorff's ordinal alpha over documents: this many resamples (seeded;
# docs/assessing.md, "Agreement"). More is steadier and slower (about 0.03 s per 1000 per table).
AGREEMENT_BOOTSTRAP_REPLICATES = envint("AGREEMENT_BOOTSTRAP_REPLICATES", 1000, minimum=100)
# A study archive's import (studies/interchange/archive/importer.py, docs/security.md): a file over
# ARCHIVE_MAX_BYTES is refused before it is read, or as soon as a pipe passes it (the import copies it to a
# temporary file, then reads it a value at a time), and a document (its title, text and extra fields) or any
# one JSON string over ARCHIVE_MAX_DOCUMENT_BYTES is refused while the file is parsed, naming the line or the
# document.
ARCHIVE_MAX_BYTES = envint("ARCHIVE_MAX_BYTES", 100 * 1024 * 1024, minimum=1024)
ARCHIVE_MAX_DOCUMENT_BYTES = envint("ARCHIVE_MAX_DOCUMENT_BYTES", 2 * 1024 * 1024, minimum=1024)
EVENTS_SEARCHES_PER_BATCH = envint("EVENTS_SEARCHES_PER_BATCH", 20, minimum=1)
EVENTS_SEARCHES_PER_MINUTE = envint("EVENTS_SEARCHES_PER_MINUTE", 120, minimum=1)
# Sizes on every events endpoint (the page's batch and the participant API; docs/security.md, docs/api.md): a
# body over EVENTS_MAX_BODY_BYTES is refused whole (413); an event whose data is over EVENTS_MAX_EVENT_BYTES
# (as compact JSON) is refused alone; and once the data a participant's clients stored reaches
# EVENTS_BYTES_PER_PARTICIPANT, each further event is refused alone ("this participant's log is full").
EVENTS_MAX_BODY_BYTES = envint("EVENTS_MAX_BODY_BYTES", 1_000_000, minimum=10_000)
EVENTS_MAX_EVENT_BYTES = envint("EVENTS_MAX_EVENT_BYTES", 256_000, minimum=1_000)
EVENTS_BYTES_PER_PARTICIPANT = envint("EVENTS_BYTES_PER_PARTICIPANT", 50_000_000, minimum=10_000)

# Outbound HTTP (sessionlab/outbound.py, docs/security.md "Outbound HTTP"): a researcher's HTTP search system,
# and anything later that calls out. Loopback, private, link-local and other non-public addresses are refused
# unless OUTBOUND_ALLOW names their network or host (comma-separated in the environment); one deadline per
# call (lookups, connections, redirects, reading); a breaker per study and host:port in the cache.
OUTBOUND_ALLOW = envhosts("OUTBOUND_ALLOW")
OUTBOUND_DEADLINE_SECONDS = envint("OUTBOUND_DEADLINE_SECONDS", 5, minimum=1)
OUTBOUND_MAX_BYTES = envint("OUTBOUND_MAX_BYTES", 5_000_000, minimum=1)
# Readiness checks (sessionlab/health.py) reported but not failing /health/ready, e.g. "broker": a broker
# outage fails no participant's request, and every node would be unready at once.
# /health/ready names its checks and this node's index counts only to a request with "Authorization: Bearer
# <HEALTH_TOKEN>" (an operator's monitoring) or a signed-in superuser; anyone else gets the bare status.
# Empty: the token is disabled.
HEALTH_TOKEN = envstr("HEALTH_TOKEN", "")
HEALTH_READY_IGNORE = [c.strip() for c in envstr("HEALTH_READY_IGNORE", "").split(",") if c.strip()]
if set(HEALTH_READY_IGNORE) - {"database", "migrations", "cache", "broker"}:
    raise ImproperlyConfigured(
        f"HEALTH_READY_IGNORE={','.join(HEALTH_READY_IGNORE)!r}: the names are database, migrations, cache, "
        "broker"
    )
OUTBOUND_MAX_REDIRECTS = envint("OUTBOUND_MAX_REDIRECTS", 3, minimum=0)
OUTBOUND_BREAKER_FAILURES = envint("OUTBOUND_BREAKER_FAILURES", 5, minimum=1)
OUTBOUND_BREAKER_COOLDOWN_SECONDS = envint("OUTBOUND_BREAKER_COOLDOWN_SECONDS", 30, minimum=1)
# A POST's deadline (outbound.post_json: a language-model assessor's request, docs/assessing.md) is the
# assessor's own timeout, at most this: a model may think for minutes where a search engine answers in ms.
OUTBOUND_POST_DEADLINE_SECONDS = envint("OUTBOUND_POST_DEADLINE_SECONDS", 300, minimum=1)

# Language-model assessors (studies/assessment/llm/, docs/assessing.md "Language-model assessors"): their API
# keys are encrypted at rest with a key derived from LLM_KEY_SECRET (SECRET_KEY when unset; changing it makes
# the stored keys unreadable, and they must be entered again). A failed request is tried again after
# LLM_RETRY_BACKOFF_SECONDS, then twice as long each time.
LLM_KEY_SECRET = envstr("LLM_KEY_SECRET", "")
LLM_RETRY_BACKOFF_SECONDS = envint("LLM_RETRY_BACKOFF_SECONDS", 2, minimum=0)
# A 429 or 503 with a Retry-After header (seconds or an HTTP date) waits that long instead, at most this.
LLM_RETRY_AFTER_MAX_SECONDS = envint("LLM_RETRY_AFTER_MAX_SECONDS", 60, minimum=0)
# A queued or running LLM run that sent nothing for this long lost its worker (or its task): starting the
# next run fails it, saying so, rather than refusing forever. Keep it above OUTBOUND_POST_DEADLINE_SECONDS.
LLM_RUN_STALE_SECONDS = envint("LLM_RUN_STALE_SECONDS", 900, minimum=60)
# A prompt template is sent with every request: at most this many characters
# (studies/assessment/llm/limits.py).
LLM_PROMPT_TEMPLATE_MAX_CHARS = envint("LLM_PROMPT_TEMPLATE_MAX_CHARS", 20_000, minimum=1_000)
# Isolation between labs (docs/security.md "Many labs on one server"): LLM runs go to a Celery queue of their
# own, `llm` (CELERY_TASK_ROUTES below; a worker started with `-Q llm` serves it, so scoring on the default
# queue never waits behind a slow model); a run is stopped at LLM_RUN_SOFT_TIME_LIMIT_SECONDS (what it
# graded stays; starting it again sends the rest) and killed 60 s later; at most LLM_RUNS_PER_LAB runs of
# one lab (a study owner's studies) run at once, a further one waiting queued, retried every
# LLM_LAB_WAIT_SECONDS.
LLM_RUN_SOFT_TIME_LIMIT_SECONDS = envint("LLM_RUN_SOFT_TIME_LIMIT_SECONDS", 3600, minimum=60)
LLM_RUN_TIME_LIMIT_SECONDS = LLM_RUN_SOFT_TIME_LIMIT_SECONDS + 60
LLM_RUNS_PER_LAB = envint("LLM_RUNS_PER_LAB", 2, minimum=1)
LLM_LAB_WAIT_SECONDS = envint("LLM_LAB_WAIT_SECONDS", 30, minimum=1)

# Failed sign-ins are limited per username and per client address (sessionlab/ratelimit.py, docs/security.md).
AUTHENTICATION_BACKENDS = ["sessionlab.ratelimit.RateLimitedModelBackend"]
LOGIN_RATE_WINDOW_SECONDS = envint("LOGIN_RATE_WINDOW_SECONDS", 15 * 60, minimum=1)
LOGIN_RATE_PER_USERNAME = envint("LOGIN_RATE_PER_USERNAME", 10, minimum=1)
LOGIN_RATE_PER_IP = envint("LOGIN_RATE_PER_IP", 50, minimum=1)
# Deprecated (use TRUSTED_PROXY_COUNT or TRUSTED_PROXIES): a header a proxy sets to one address, e.g.
# HTTP_X_REAL_IP; else REMOTE_ADDR.
LOGIN_RATE_IP_META = envstr("LOGIN_RATE_IP_META", "REMOTE_ADDR")
# The client's address for every per-address limit (sessionlab/client_address.py, docs/security.md): the
# number of proxies in front of this server, or their networks; X-Forwarded-For is read from the right past
# them. Neither: REMOTE_ADDR. Behind a load balancer, set one, or every client shares the balancer's address.
TRUSTED_PROXY_COUNT = envint("TRUSTED_PROXY_COUNT", 0, minimum=0)
TRUSTED_PROXIES = envnetworks("TRUSTED_PROXIES")
if sum([bool(TRUSTED_PROXY_COUNT), bool(TRUSTED_PROXIES), LOGIN_RATE_IP_META != "REMOTE_ADDR"]) > 1:
    raise ImproperlyConfigured(
        "Set only one of TRUSTED_PROXY_COUNT, TRUSTED_PROXIES and LOGIN_RATE_IP_META (deprecated): each "
        "alone decides the client's address (docs/security.md)"
    )

# Password reset (docs/security.md, "Making accounts"): requests per e-mail address and per client
# address within LOGIN_RATE_WINDOW_SECONDS, whatever their outcome (each may send an e-mail).
PASSWORD_RESET_RATE_PER_EMAIL = envint("PASSWORD_RESET_RATE_PER_EMAIL", 3, minimum=1)
PASSWORD_RESET_RATE_PER_IP = envint("PASSWORD_RESET_RATE_PER_IP", 20, minimum=1)
PASSWORD_RESET_TIMEOUT = envint("PASSWORD_RESET_TIMEOUT", 3 * 24 * 3600, minimum=60)  # a link's life, s

# E-mail (password reset links): EMAIL_BACKEND is console (printed on the server's output: development, or a
# deployment that reads its logs), smtp (EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD,
# EMAIL_USE_TLS / EMAIL_USE_SSL), locmem (kept in memory: tests) or dummy (never sent).
EMAIL_BACKENDS = {
    "console": "django.core.mail.backends.console.EmailBackend",
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
    "locmem": "django.core.mail.backends.locmem.EmailBackend",
    "dummy": "django.core.mail.backends.dummy.EmailBackend",
}
_email_backend = envstr("EMAIL_BACKEND", "console").strip().lower() or "console"
if _email_backend not in EMAIL_BACKENDS:
    raise ImproperlyConfigured(
        f"EMAIL_BACKEND={_email_backend!r} is not one of {', '.join(EMAIL_BACKENDS)} (docs/security.md)"
    )
EMAIL_BACKEND_NAME = _email_backend
EMAIL_BACKEND = EMAIL_BACKENDS[_email_backend]
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = envbool("EMAIL_USE_SSL", False)
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("Set only one of EMAIL_USE_TLS and EMAIL_USE_SSL")
EMAIL_TIMEOUT = envint("EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "SessionLab <sessionlab@localhost>")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
# "home" sends researchers to their studies and assessors to their assessment pages.
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where collectstatic writes and WhiteNoise reads with DEBUG off; a benchmark or a test collects elsewhere.
STATIC_ROOT = Path(envstr("STATIC_ROOT", "") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# In development WhiteNoise serves straight from static/ (no collectstatic needed, plain names). With DEBUG
# off collectstatic writes hashed copies (js/participant.fadba7416972.js, their module imports rewritten)
# with compressed ones beside them, and pages name the hashed files (sessionlab/staticfiles.py): a rolling
# deploy never serves a new page with an old script, and browsers may cache such a file for ever
# (docs/deploying.md, "Static files"). Before collectstatic has run, such a page fails ("Missing
# staticfiles manifest entry").
STATIC_FILES_HASHED = not DEBUG
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

# Celery: eager (in-process) unless a broker is configured.
CELERY_BROKER_URL = envurl("CELERY_BROKER_URL", ("redis", "rediss", "amqp", "memory"))
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
# A result backend the broker's chords can use: the broker's Redis when unset; RabbitMQ needs one named; a
# pair that cannot work is refused here with what to set (sessionlab/celery_backend.py, docs/deploying.md).
CELERY_RESULT_BACKEND = result_backend_for(CELERY_BROKER_URL, envstr("CELERY_RESULT_BACKEND", ""))
if CELERY_BROKER_URL is None:
    CELERY_BROKER_URL = "memory://"
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Task modules autodiscovery does not find (it imports only each app's tasks.py): the study planner's.
CELERY_IMPORTS = ("scoring.planning.tasks",)
# A language model's run is slow and its own lab's: a queue of its own (LLM_RUN_* above; docs/deploying.md).
CELERY_TASK_ROUTES = {
    "studies.tasks.llm_run_task": {"queue": "llm"},
    "studies.tasks.llm_audit_task": {"queue": "llm"},  # a robustness audit is a run's kin
}
# Both queues declared: a worker started without -Q serves both (one machine); a cluster gives each its own.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = (Queue("celery", routing_key="celery"), Queue("llm", routing_key="llm"))
# With Redis as the broker, a task taken by a worker that dies before acking (acks_late) is delivered again
# after the visibility timeout (kombu's default: one hour); CELERY_VISIBILITY_TIMEOUT (seconds) shortens it
# and must stay longer than the longest task. Queueing from a request gives up quickly when the broker is down
# (the caller logs it and leaves the run stale for `manage.py requeue_stale_runs`: sessionlab/queueing.py).
# With it set, workers also sweep for such messages every quarter of it (at most every 10 s; kombu's default
# sweep is about every 100 s).


def broker_transport_options(visibility_timeout: int) -> dict:
    """Redis transport options for a visibility timeout in seconds (0: kombu's defaults)."""
    if not visibility_timeout:
        return {}
    sweep = max(1, min(10, visibility_timeout // 4))
    return {
        "visibility_timeout": visibility_timeout,
        "unacked_restore_throttle": 1,
        "unacked_restore_interval": sweep,
        # A sweep holds a lock in Redis; a worker killed during one leaves it behind until it expires (kombu:
        # 300 s), and until then no worker sweeps. A sweep takes milliseconds, and two at once restore nothing
        # twice (each message is restored in a transaction watching it), so the lock lasts as long as one
        # interval.
        "unacked_mutex_expire": sweep,
    }


CELERY_BROKER_TRANSPORT_OPTIONS = broker_transport_options(envint("CELERY_VISIBILITY_TIMEOUT", 0, minimum=0))
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
# Scoring passes owed after a broker outage are queued again every REQUEUE_STALE_RUNS_SECONDS by a beat
# process (`celery -A sessionlab beat`, or `worker -B` on a single machine: docs/running-a-study.md); without
# one (eager mode, no beat) this entry is never read. A beat message a worker has not taken within one
# interval expires, so stopped workers do not come back to a pile of identical sweeps.
REQUEUE_STALE_RUNS_SECONDS = envint("REQUEUE_STALE_RUNS_SECONDS", 300, minimum=1)
# A run "running" for longer than this has lost its tasks (a broker that restarted empty): the sweep queues it
# again. It must stay longer than the longest real pass (10,000 sessions take about 16 s with one worker).
REQUEUE_STUCK_MINUTES = envint("REQUEUE_STUCK_MINUTES", 30, minimum=1)
# Overdue sessions and participants (the per-scenario and the study-level time limits) are closed by the
# server every OVERDUE_SWEEP_SECONDS, whether or not their participant comes back (docs/recruitment.md);
# without a beat, arrivals time out the overdue and participants' pages run the sweep (at most once per
# OVERDUE_SWEEP_SECONDS per study).
OVERDUE_SWEEP_SECONDS = envint("OVERDUE_SWEEP_SECONDS", 60, minimum=1)
# A panel status's time (the endpoint's "time", an export's date) is refused, per item, when it is more than
# this many seconds ahead of the server's clock, or before the study was created: a wrong clock (or a year
# 9999) must never become the newest status and make every later real one "older" (docs/security.md).
PANEL_STATUS_MAX_FUTURE_SECONDS = envint("PANEL_STATUS_MAX_FUTURE_SECONDS", 300, minimum=0)
# A browser upload whose row has not moved for UPLOAD_STALE_MINUTES has lost its worker (killed mid-task; a
# redelivered task finds the upload claimed): it is ended as failed, saying where it stopped, and its stored
# files are deleted, every STALE_UPLOADS_SWEEP_SECONDS by the beat and whenever its page is read
# (studies/library/sweep.py). Longer than the slowest step of the largest upload (each step and each index
# reports; a 256 MB collection's single index build is the longest wait).
UPLOAD_STALE_MINUTES = envint("UPLOAD_STALE_MINUTES", 60, minimum=1)
STALE_UPLOADS_SWEEP_SECONDS = envint("STALE_UPLOADS_SWEEP_SECONDS", 300, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "requeue-stale-runs": {
        "task": "scoring.tasks.stale_runs_requeue_task",
        "schedule": REQUEUE_STALE_RUNS_SECONDS,
        "options": {"expires": REQUEUE_STALE_RUNS_SECONDS},
        # A second beat (one per node) sends it too; the task runs once per interval (studies/beat.py).
        "kwargs": {"once_per_seconds": REQUEUE_STALE_RUNS_SECONDS},
    },
    "sweep-overdue-participants": {
        "task": "studies.tasks.overdue_sweep_task",
        "schedule": OVERDUE_SWEEP_SECONDS,
        "options": {"expires": OVERDUE_SWEEP_SECONDS},
        "kwargs": {"once_per_seconds": OVERDUE_SWEEP_SECONDS},
    },
    "fail-stale-uploads": {
        "task": "studies.tasks.stale_uploads_fail_task",
        "schedule": STALE_UPLOADS_SWEEP_SECONDS,
        "options": {"expires": STALE_UPLOADS_SWEEP_SECONDS},
        "kwargs": {"once_per_seconds": STALE_UPLOADS_SWEEP_SECONDS},
    },
}

# Chart data cache (scoring dashboards) and sign-in counts (sessionlab/ratelimit.py): per-process memory by
# default; CACHE_URL (redis://...) shares them. Chart entries are keyed by each run's generation, so a stale
# one is never read, whichever backend holds it. Not the broker's Redis by default (docs/security.md): a
# broker outage would then fail every sign-in, and cache.clear() (the tests call it) flushes the database it
# is in; instead, with DEBUG off and no CACHE_URL, `check --deploy` warns (sessionlab.W001,
# sessionlab/checks.py).
_cache_url = envurl("CACHE_URL", ("redis", "rediss"))
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _cache_url}
    if _cache_url
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "sessionlab"}
}

REST_FRAMEWORK = {
    # Token first: DRF answers a request without credentials with the first class's scheme, so 401 with
    # `WWW-Authenticate: Token` (session auth has no scheme: it made that a 403). The session stays for the
    # browser (Swagger UI) with its CSRF check; 403 is for a caller who is known but not allowed.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    # JSON bodies only (docs/api.md, "Conventions"): one content type per body in the schema, which generated
    # clients need; the one upload endpoint names its multipart parser itself. The HTML pages are not DRF.
    # A body the API cannot read is a JSON 4xx with the reason (sessionlab/api_errors.py), never a 500 or
    # HTML.
    "DEFAULT_PARSER_CLASSES": ["sessionlab.api_errors.JSONParser"],
    "EXCEPTION_HANDLER": "sessionlab.api_errors.exception_handler",
    "PAGE_SIZE": 100,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "SessionLab API",
    "DESCRIPTION": "Studies, their design, participants, sessions, reference judgments and scoring runs "
    "(docs/api.md).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and ReDoc from the sidecar package, served locally: the pages work without internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# The shared data folder (trec_eval and ir_measures test files, the TREC Session 2012 log) some tests read;
# the Cranfield collection ships in studies/demo_data/cranfield (the demo and the tests use that copy).
SESSIONLAB_DATA = envstr("SESSIONLAB_DATA", "")
DEMO_DATA = envstr("DEMO_DATA", "")
# Where the built-in search engines keep their indexes (built by `manage.py build_index` or a task).
INDEX_ROOT = Path(envstr("INDEX_ROOT", str(BASE_DIR / "indexes")))
# Each node's INDEX_ROOT is a cache of the database's current index versions: a node whose copy is missing or
# stale builds it in a background thread when a search needs it (the search answers "retry later" meanwhile).
# Off: only manage.py build_index (run on that node) builds it (docs/deploying.md).
INDEX_BUILD_ON_MISS = envbool("INDEX_BUILD_ON_MISS", True)

# Shared storage for uploads (docs/deploying.md): where a browser upload waits for the Celery worker. Unset,
# a folder under INDEX_ROOT on this machine (studies/library/storage.py); with web and worker on different
# hosts, UPLOAD_STORAGE_URL=s3://bucket/prefix?endpoint_url=...&region_name=... (any S3-compatible store;
# the keys come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or boto3's other usual places).
_UPLOAD_STORAGE_OPTIONS = ("endpoint_url", "region_name", "addressing_style", "signature_version")


def _upload_storage(url: str) -> dict:
    from urllib.parse import parse_qsl, urlsplit

    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ImproperlyConfigured(f"UPLOAD_STORAGE_URL={url!r} must look like s3://bucket/prefix")
    options: dict = {"bucket_name": parts.netloc, "location": parts.path.strip("/"), "default_acl": None}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in _UPLOAD_STORAGE_OPTIONS:
            raise ImproperlyConfigured(
                f"UPLOAD_STORAGE_URL: unknown option {key!r}; "
                f"expected one of {', '.join(_UPLOAD_STORAGE_OPTIONS)}"
            )
        options[key] = value
    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}


STORAGES = {  # Django's defaults, plus the uploads' store when one is configured
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "sessionlab.staticfiles.HashedStaticFilesStorage"
        if STATIC_FILES_HASHED
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
UPLOAD_STORAGE_URL = envstr("UPLOAD_STORAGE_URL", "").strip()
if UPLOAD_STORAGE_URL:
    STORAGES["collection_uploads"] = _upload_storage(UPLOAD_STORAGE_URL)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    # Eager Celery (the default, no broker) would log "Task ... succeeded" for every task run inside a request
    # or command: hundreds of lines in `make demo`. Failures are still logged; real workers keep their INFO
    # lines.
    "loggers": {
        # Django's own default gives "django" a console handler of its own with DEBUG on; its records also
        # reach the root's, so a 400 or 404 was printed twice. One handler: the root's.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        **({"celery.app.trace": {"level": "WARNING"}} if CELERY_TASK_ALWAYS_EAGER else {}),
    },
}
