"""The static files' storage with DEBUG off (sessionlab/settings.py, docs/deploying.md "Static files").

WhiteNoise's CompressedManifestStaticFilesStorage names each collected file by its content's hash and writes
a gzip copy beside it (and a Brotli one when the brotli package is installed). Our scripts are ES modules that
import one another by relative name (static/js/participant/*.js); Django rewrites those imports to the hashed
names only when asked, so this storage asks: a page of a new release then loads the new module graph whole,
never a new script importing an old module left in a browser's or a node's cache.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class HashedStaticFilesStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True
    # A module's hash settles once every module it imports has its own: one pass per level of the deepest
    # import chain (participant.js is 10 modules deep; Django's default allows 5).
    max_post_process_passes = 20
