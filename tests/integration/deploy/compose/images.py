"""The images the live compose test runs: framegate's, built from
deploy/Dockerfile as Compose builds it, and the stand-ins of
standins/Dockerfile, all on the debootstrap base (base_image.py).

framegate's build is CPU-bound and the stand-ins' mostly wait for the
mirror, so they are built side by side.
"""

from __future__ import annotations

import concurrent.futures
import os
import time

import base_image
import dockerfile
from deploy_files import DOCKERFILE, REPO_ROOT
from docker_engine import docker

HERE = os.path.dirname(os.path.abspath(__file__))
STANDINS_DIR = os.path.join(HERE, "standins")
FRAMEGATE_IMAGE = "framegate:compose-test"
# target in standins/Dockerfile -> tag, as docker-compose.test.yml names them
STANDINS = {target: f"framegate-standin/{target}:bookworm" for target in ("redis", "prometheus", "nginx")}
RELEASE = "bookworm"


def base_tags() -> list[str]:
    """The images deploy/Dockerfile's stages start FROM (its ARG defaults applied)."""
    with open(DOCKERFILE, encoding="utf-8") as f:
        stages = dockerfile.stages(f.read())
    return sorted({s.image for s in stages if s.image not in {t.name for t in stages}})


def image_id(tag: str) -> str | None:
    result = docker("image", "inspect", "--format", "{{.Id}}", tag, check=False)
    return result.stdout.strip() if result.returncode == 0 else None


def build(tag: str, context: str, *args: str) -> float:
    """`docker build` (BuildKit) of `tag`; the image it replaces is removed if nothing else names it."""
    before = image_id(tag)
    started = time.monotonic()
    docker("build", "--quiet", "--tag", tag, *args, context, timeout=1500,
           env=dict(os.environ, DOCKER_BUILDKIT="1"))
    after = image_id(tag)
    if before and before != after and not docker("image", "inspect", "--format", "{{.RepoTags}}",
                                                 before).stdout.strip("[]\n"):
        docker("image", "rm", before, check=False)
    return time.monotonic() - started


def make_all(log) -> None:
    """Every image of the test, made or brought up to date, logging how long each step took."""
    started = time.monotonic()
    base_image.ensure(RELEASE, base_tags(), log)
    log(f"base image: {time.monotonic() - started:.0f} s")
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        framegate = pool.submit(build, FRAMEGATE_IMAGE, REPO_ROOT, "--file", DOCKERFILE)
        standins = sum(build(tag, STANDINS_DIR, "--target", target) for target, tag in STANDINS.items())
        log(f"stand-in images: {standins:.0f} s")
        log(f"framegate image: {framegate.result():.0f} s")
