"""The base image deploy/Dockerfile names (debian:bookworm and
debian:bookworm-slim), made here when no registry can be reached:
`debootstrap --variant=minbase` from the Debian mirror this machine's apt
uses, then `docker import`. Made once: a tag that exists is left as it is.

minbase is Debian's essential packages plus apt, what the official slim
image holds; the full image adds little the Dockerfile uses (its build
stage installs its own compiler and libraries).
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import tempfile

from docker_engine import command, docker, fail

APT_SOURCES = ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list")),
               *sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))]


def apt_entries(path: str) -> list[tuple[str, list[str]]]:
    """(URI, suites) of each enabled `deb` entry of an apt sources file, one-line or deb822."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    entries = []
    if path.endswith(".sources"):
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.split()
            if "deb" in fields.get("types", []) and fields.get("enabled", ["yes"]) != ["no"]:
                entries += [(uri, fields.get("suites", [])) for uri in fields.get("uris", [])]
        return entries
    for line in text.splitlines():
        words = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb":
            entries.append((words[1], [words[2]]))
    return entries


def mirrors(release: str) -> dict[str, str]:
    """suite -> URI for the release's suites (release, -updates, -security) this machine's apt uses."""
    wanted = (release, f"{release}-updates", f"{release}-security")
    found: dict[str, str] = {}
    for path in APT_SOURCES:
        for uri, suites in apt_entries(path):
            for suite in suites:
                if suite in wanted:
                    found.setdefault(suite, uri.rstrip("/"))
    if release not in found:
        fail(f"no Debian mirror for {release} in {', '.join(APT_SOURCES)}")
    return found


def sources_file(suites: dict[str, str]) -> str:
    """The image's /etc/apt/sources.list.d/debian.sources (deb822, as in the official image)."""
    by_uri: dict[str, list[str]] = {}
    for suite, uri in suites.items():
        by_uri.setdefault(uri, []).append(suite)
    return "\n".join(f"Types: deb\nURIs: {uri}\nSuites: {' '.join(names)}\nComponents: main\n"
                     "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
                     for uri, names in by_uri.items())


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, check=False).returncode == 0


def ensure(release: str, tags: list[str], log) -> None:
    """Make the base image and give it each of `tags` that no image has yet."""
    missing = [t for t in tags if not image_exists(t)]
    if not missing:
        return
    if os.geteuid() != 0:
        fail(f"{', '.join(missing)} missing and only root can debootstrap it: run this test as root")
    suites = mirrors(release)
    with tempfile.TemporaryDirectory(prefix="fg-debootstrap-") as work:
        rootfs = os.path.join(work, "rootfs")
        log(f"debootstrap --variant=minbase {release} from {suites[release]} (once; tags {', '.join(missing)})")
        result = subprocess.run([command("debootstrap"), "--variant=minbase", release, rootfs, suites[release]],
                                capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            fail(f"debootstrap failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
        # As in the official image: the machine's mirrors, empty package lists, no downloaded .debs.
        os.remove(os.path.join(rootfs, "etc", "apt", "sources.list"))
        with open(os.path.join(rootfs, "etc", "apt", "sources.list.d", "debian.sources"), "w", encoding="utf-8") as f:
            f.write(sources_file(suites))
        subprocess.run(["find", f"{rootfs}/var/lib/apt/lists", f"{rootfs}/var/cache/apt", "-type", "f", "-delete"],
                       check=True)
        tar = subprocess.Popen(["tar", "-C", rootfs, "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        imported = docker("import", "--change", 'CMD ["bash"]', "--message",
                          f"debootstrap --variant=minbase {release} {suites[release]}", "-", missing[0],
                          stdin=tar.stdout, timeout=600)
        tar.stdout.close()
        if tar.wait() != 0:
            fail("tar of the debootstrap root failed")
        for tag in missing[1:]:
            docker("tag", imported.stdout.strip(), tag)
