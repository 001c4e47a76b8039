"""Django settings, read from TRACE_* environment variables (see .env.example).

Importing them starts nothing: the embedded PostgreSQL starts on the first database connection
(trace_site.embedded_pg) and the embedded Redis when the Celery app loads this configuration
(trace_site.celery); the health page only reports it. They write nothing either: without
TRACE_SECRET_KEY, the key kept in the data directory is read (or generated) when first used
(trace_site.secret_key), and `serve` creates it before anything else. Test-only values (the test
database's name) live with the tests (tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from django.utils.csp import CSP
from redis.backoff import NoBackoff
from redis.retry import Retry

from trace_site import embedded
from trace_site.env import (
    ConfigError,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_path,
    env_str,
)
from trace_site.secret_key import lazy_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
TRACE_DATA_DIR = env_path("TRACE_DATA_DIR", BASE_DIR / "data")

DEBUG = env_bool("TRACE_DEBUG", False)


TRACE_SECRET_KEY_FILE = TRACE_DATA_DIR / "secret_key"
SECRET_KEY = env_str("TRACE_SECRET_KEY") or lazy_secret_key(TRACE_SECRET_KEY_FILE)
ALLOWED_HOSTS = env_list("TRACE_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("TRACE_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "trace_site",
    "archive",
    "retrieval",
    "agent",
    "measurement",
]

MIDDLEWARE = [
    "trace_site.proxy.ProxyClientAddressMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "trace_site.security.SecureCookiesOverTlsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "trace_site.limits.RequestLimitsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "trace_site.security.NoStoreMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "trace_site.security.LoginThrottleMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "trace_site.urls"
WSGI_APPLICATION = "trace_site.wsgi.application"

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
                "trace_site.context_processors.trace",
            ],
        },
    },
]


def _database_from_url(url: str) -> dict[str, Any]:
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql"}:
        raise ConfigError(
            f"TRACE_DATABASE_URL must be a postgres:// URL, got scheme {parsed.scheme!r}"
        )
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")) or "trace",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": unquote(parsed.hostname or ""),
        "PORT": str(parsed.port or ""),
    }


_database_url = env_str("TRACE_DATABASE_URL")
TRACE_EMBEDDED_POSTGRES = _database_url is None
_database: dict[str, Any]
if _database_url is None:
    _database = {"ENGINE": "trace_site.embedded_pg", "NAME": embedded.DB_NAME, "USER": "postgres"}
else:
    _database = _database_from_url(_database_url)
# A separate process (the Celery worker of an end-to-end test) may be pointed at another database.
_database["NAME"] = env_str("TRACE_DATABASE_NAME", _database["NAME"])
_database["CONN_MAX_AGE"] = env_int("TRACE_DB_CONN_MAX_AGE", 0)
DATABASES = {"default": _database}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_redis_url = env_str("TRACE_REDIS_URL")
TRACE_EMBEDDED_REDIS = _redis_url is None
TRACE_REDIS_URL = _redis_url or embedded.redis_url(TRACE_DATA_DIR)
CELERY_BROKER_URL = TRACE_REDIS_URL
CELERY_RESULT_BACKEND = TRACE_REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("TRACE_CELERY_EAGER", False)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True


def _redis_cache_location(url: str) -> str:
    """Turn the broker URL into one redis-py reads (a Unix socket becomes unix://)."""
    if url.startswith("redis+socket://"):
        path, _, query = url.removeprefix("redis+socket://").partition("?")
        db = dict(p.partition("=")[::2] for p in query.split("&") if p).get("virtual_host", "0")
        return f"unix://{path}?db={db or 0}"
    return url


CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Shared by every web process; short timeouts so a Redis outage never stalls a log-in.
    "throttle": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": _redis_cache_location(TRACE_REDIS_URL),
        "KEY_PREFIX": "trace",
        "OPTIONS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5,
                    "retry": Retry(NoBackoff(), 0)},
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # HTMX reads the token from the page, not the cookie
SESSION_COOKIE_SECURE = env_bool("TRACE_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
# Behind a reverse proxy (docker-compose.yml's nginx): the client's address and scheme come from
# the proxy's headers (trace_site.proxy). Only where the app server is reachable through it alone.
TRACE_BEHIND_PROXY = env_bool("TRACE_BEHIND_PROXY", False)
if TRACE_BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
# Limits on what a user sends (trace_site.limits): a larger body gets 413 before it is read;
# form fields (files aside) are held in memory up to DATA_UPLOAD_MAX_MEMORY_SIZE, an upload up to
# FILE_UPLOAD_MAX_MEMORY_SIZE (larger ones spill to a temporary file); a batch file is refused
# over TRACE_MAX_UPLOAD_BYTES; a question over TRACE_MAX_QUESTION_CHARS, whatever its entry point.
TRACE_MAX_REQUEST_BYTES = env_int("TRACE_MAX_REQUEST_BYTES", 5_000_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("TRACE_MAX_FORM_BYTES", 1_000_000)
FILE_UPLOAD_MAX_MEMORY_SIZE = env_int("TRACE_MAX_UPLOAD_MEMORY_BYTES", 1_000_000)
TRACE_MAX_UPLOAD_BYTES = env_int("TRACE_MAX_UPLOAD_BYTES", 4_000_000)
TRACE_MAX_PARAM_CHARS = env_int("TRACE_MAX_PARAM_CHARS", 2000)
TRACE_MAX_QUESTION_CHARS = env_int("TRACE_MAX_QUESTION_CHARS", 2000)
TRACE_MAX_BATCH_QUESTIONS = env_int("TRACE_MAX_BATCH_QUESTIONS", 2000)
# Content-Security-Policy: scripts, styles and everything else from this site only; no inline
# script or style (HTMX runs with its indicator styles and eval off, see base.html).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# Login throttling: after TRACE_LOGIN_MAX_FAILURES failures for one username from one address
# (or TRACE_LOGIN_MAX_FAILURES_PER_ADDRESS from one address) within the window, log-ins from
# there get 429 until the window ends. Counts live in the "throttle" cache (Redis).
TRACE_LOGIN_MAX_FAILURES = env_int("TRACE_LOGIN_MAX_FAILURES", 5)
TRACE_LOGIN_MAX_FAILURES_PER_ADDRESS = env_int("TRACE_LOGIN_MAX_FAILURES_PER_ADDRESS", 50)
TRACE_LOGIN_WINDOW_SECONDS = env_int("TRACE_LOGIN_WINDOW_SECONDS", 900)
TRACE_LOGIN_THROTTLE_CACHE = "throttle"
# /healthz waits at most this long for all its checks together.
TRACE_HEALTH_TIMEOUT = env_float("TRACE_HEALTH_TIMEOUT", 1.5)
# Each worker writes its heartbeat (alive, how busy) to Redis this often; /healthz reads it.
TRACE_WORKER_HEARTBEAT_SECONDS = env_float("TRACE_WORKER_HEARTBEAT_SECONDS", 2.0)

LANGUAGE_CODE = "en"
TIME_ZONE = "Europe/Paris"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = TRACE_DATA_DIR / "staticfiles"  # filled by collectstatic (`serve` runs it)
WHITENOISE_USE_FINDERS = True

# Retrieval and embeddings
TRACE_EMBEDDING_PROVIDER = env_choice(
    "TRACE_EMBEDDING_PROVIDER", "use", {"use", "e5", "openai", "hash"}
)
TRACE_EMBEDDING_BASE_URL = env_str("TRACE_EMBEDDING_BASE_URL")
TRACE_EMBEDDING_API_KEY = env_str("TRACE_EMBEDDING_API_KEY", "")
TRACE_EMBEDDING_MODEL = env_str("TRACE_EMBEDDING_MODEL")
TRACE_EMBEDDING_DIMENSIONS = env_int("TRACE_EMBEDDING_DIMENSIONS", 0)
# The BM25 index directory: a volume shared by every web and worker process in a multi-host layout.
TRACE_BM25_DIR = env_path("TRACE_BM25_DIR", TRACE_DATA_DIR / "bm25")
# Tantivy: whoosh's recall (candidates rescored to k1 1.5, b 0.9), a fraction of its query time.
TRACE_BM25_ENGINE = env_choice("TRACE_BM25_ENGINE", "tantivy", {"whoosh", "tantivy"})
TRACE_TEMPORAL_HALF_LIFE_DAYS = env_float("TRACE_TEMPORAL_HALF_LIFE_DAYS", 7.0)
# Import: the largest ALTO page or METS file read; a larger one is refused from its size alone.
TRACE_ALTO_MAX_FILE_BYTES = env_int("TRACE_ALTO_MAX_FILE_BYTES", 20_000_000)

# LLM: without a base URL the offline policy (no LLM) runs the same engine.
# The offline policy's judge: the learnt model (trees and card in TRACE_JUDGE_MODEL_DIR, made by
# `manage.py train_judge`), or the rules; a model that does not load falls back to the rules.
TRACE_JUDGE = env_choice("TRACE_JUDGE", "learnt", {"learnt", "rules"})
TRACE_JUDGE_MODEL_DIR = env_path("TRACE_JUDGE_MODEL_DIR", BASE_DIR / "agent" / "judge_model")
# Overrides a historian makes before new runs of theirs adapt to them; pooled across users when
# TRACE_JUDGE_POOL_OVERRIDES is set (one instance, one team).
TRACE_JUDGE_MIN_OVERRIDES = env_int("TRACE_JUDGE_MIN_OVERRIDES", 10)
TRACE_JUDGE_POOL_OVERRIDES = env_bool("TRACE_JUDGE_POOL_OVERRIDES", False)

TRACE_LLM_BASE_URL = env_str("TRACE_LLM_BASE_URL")
TRACE_LLM_API_KEY = env_str("TRACE_LLM_API_KEY", "")
TRACE_LLM_MODEL = env_str("TRACE_LLM_MODEL", "deepseek-chat")
TRACE_LLM_PLANNER_MODEL = env_str("TRACE_LLM_PLANNER_MODEL", TRACE_LLM_MODEL)
TRACE_LLM_AGENT_MODEL = env_str("TRACE_LLM_AGENT_MODEL", TRACE_LLM_MODEL)
TRACE_LLM_RERANKER_MODEL = env_str("TRACE_LLM_RERANKER_MODEL", TRACE_LLM_MODEL)
# Further models the endpoint serves, offered (with the role models) when a run is run again.
TRACE_LLM_MODELS = env_list("TRACE_LLM_MODELS", [])
TRACE_LLM_TIMEOUT = env_float("TRACE_LLM_TIMEOUT", 60.0)
TRACE_LLM_MAX_RETRIES = env_int("TRACE_LLM_MAX_RETRIES", 4)
TRACE_LLM_PRICE_INPUT_PER_M = env_float("TRACE_LLM_PRICE_INPUT_PER_M", 0.0)
TRACE_LLM_PRICE_OUTPUT_PER_M = env_float("TRACE_LLM_PRICE_OUTPUT_PER_M", 0.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A refused request is logged on one line, its traceback dropped (a 500 keeps its own).
    "filters": {"refusals": {"()": "trace_site.log_filters.RefusalsOnOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["refusals"]}},
    "root": {"handlers": ["console"], "level": env_str("TRACE_LOG_LEVEL", "WARNING")},
}

# Tasks go to this queue; a test run uses a queue of its own.
TRACE_CELERY_QUEUE = env_str("TRACE_CELERY_QUEUE", "celery")
CELERY_TASK_DEFAULT_QUEUE = TRACE_CELERY_QUEUE

# Durable runs: a running investigation refreshes its heartbeat every TRACE_HEARTBEAT_SECONDS;
# each worker sweeps every TRACE_SWEEP_SECONDS / 2, so a run whose worker died is marked
# interrupted (and resumed, up to TRACE_AUTO_RESUME_ATTEMPTS attempts) within TRACE_SWEEP_SECONDS.
TRACE_HEARTBEAT_SECONDS = env_float("TRACE_HEARTBEAT_SECONDS", 5.0)
TRACE_SWEEP_SECONDS = env_float("TRACE_SWEEP_SECONDS", 30.0)
TRACE_AUTO_RESUME_ATTEMPTS = env_int("TRACE_AUTO_RESUME_ATTEMPTS", 3)
if TRACE_SWEEP_SECONDS < 4 * TRACE_HEARTBEAT_SECONDS:
    raise ConfigError("TRACE_SWEEP_SECONDS must be at least four TRACE_HEARTBEAT_SECONDS")
