"""Where a user's own copy of a bundled table lives (the price file, the GPU catalog): an explicit path,
else the file an environment variable names, else the one in the user's config directory if it exists.
A named path must exist: a typo would otherwise silently plan with the bundled table.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import platformdirs

from spotkube.platform.records import record

#: The environment variables platformdirs finds the user's config directory by: XDG_CONFIG_HOME, then
#: HOME, on Linux and macOS; on Windows its override of the local application data folder, else the
#: system's folder (APPDATA and LOCALAPPDATA where it can't ask the system).
_CONFIG_DIR_VARIABLES = ("XDG_CONFIG_HOME", "HOME", "WIN_PD_OVERRIDE_LOCAL_APPDATA", "APPDATA", "LOCALAPPDATA")


@functools.lru_cache(maxsize=4)
def _config_dir(*_environment: str | None) -> Path:
    """The user's config directory for spotkube, computed once per value of the variables it depends
    on: the plan looks the catalog file up for every pool it reads, many times over."""
    return platformdirs.user_config_path("spotkube", appauthor=False)


@record
class UserFile:
    """One kind of user file: its name in the config directory and the variable that names it."""

    #: The file's name in the user's config directory, e.g. `prices.json`.
    name: str
    #: The environment variable that names the file, e.g. `SPOTKUBE_PRICES`.
    env: str
    #: What messages call it, e.g. "price file".
    what: str

    def default(self) -> Path:
        """The per-user file, e.g. ~/.config/spotkube/prices.json on Linux. It may not exist."""
        return _config_dir(*map(os.environ.get, _CONFIG_DIR_VARIABLES)) / self.name

    def named(self) -> Path | None:
        """The file the environment variable names, if it is set to something."""
        value = os.environ.get(self.env, "").strip()
        return Path(value).expanduser() if value else None

    def path(self, explicit: Path | None = None) -> Path:
        """The file that is read and refreshed: `explicit`, else the variable's, else `default()`.
        It may not exist."""
        return explicit if explicit is not None else self.named() or self.default()

    def lookup(self, explicit: Path | None = None) -> tuple[Path | None, str | None]:
        """The file to read over the bundled table, or None to use the bundled table alone, and the
        reason a named file can't be used (None when it can)."""
        path = self.path(explicit)
        if path.is_file():
            return path, None
        if path.exists():
            return None, f"{path}: is not a file"
        if explicit is not None:
            return None, f"{path}: no such {self.what}"
        if self.named() is not None:
            return None, f"{path}: no such {self.what} (named by {self.env})"
        return None, None
