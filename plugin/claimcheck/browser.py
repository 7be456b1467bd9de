"""A report page as a browser shows it, for tests of a report (the plugin's and a document's own):
headless Chromium's DOM after the page's scripts ran. Standard library only; no Chromium, no
page (the caller skips)."""
import shutil
import subprocess
from pathlib import Path


def chromium() -> str | None:
    """Chromium's path, or None where it is not installed (``apt-get install chromium``)."""
    return shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)


def dom(chromium_path: str, profile: Path, url: str, *extra: str, size: str = "1280,2000") -> str:
    """The page's DOM after its scripts ran (``--dump-dom``), with ``extra`` Chromium flags; a
    profile folder of its own keeps runs apart. Chromium's failure raises, naming its stderr."""
    run = subprocess.run(
        [chromium_path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--hide-scrollbars", f"--window-size={size}", *extra,
         "--dump-dom", url],
        capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError(f"chromium exited {run.returncode}: {run.stderr.strip()[-300:]}")
    return run.stdout
