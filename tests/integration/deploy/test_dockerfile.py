"""deploy/Dockerfile, checked without a Docker engine: what it copies
exists and reaches the build context, those files are enough to configure
the build, the runtime stage installs exactly the packages of the shared
libraries the binaries load, and it runs as a non-root user with a
HEALTHCHECK on /healthz."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

import dockerfile
from deploy_files import DOCKERFILE, DOCKERIGNORE, HEALTHCHECK, REPO_ROOT, SETUP_SH, run, tool

BINARIES = {
    name: os.environ.get(variable) or os.path.join(REPO_ROOT, "build", "bin", name)
    for name, variable in (("framegate-gateway", "FRAMEGATE_GATEWAY_BIN"), ("framegate-worker", "FRAMEGATE_WORKER_BIN"))
}


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def context_files(source: str) -> list[str]:
    """The repository files under a COPY source (tracked ones in a git checkout)."""
    listed = run(["git", "ls-files", "--", source])
    if listed.returncode == 0 and listed.stdout:
        return listed.stdout.split()
    root = os.path.join(REPO_ROOT, source)
    if os.path.isfile(root):
        return [source]
    return [os.path.relpath(os.path.join(d, f), REPO_ROOT) for d, _, files in os.walk(root) for f in files]


def needed_packages(binary: str) -> set[str]:
    """The Debian packages of the libraries `binary` names as NEEDED (not their dependencies: apt installs those)."""
    dynamic = run([tool("readelf"), "-d", binary]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    resolved = dict(re.findall(r"^\s*(\S+) => (\S+)", run(["ldd", binary]).stdout, re.MULTILINE))
    packages = set()
    for soname in needed:
        path = resolved[soname]
        real = os.path.realpath(path)
        # With merged /usr, dpkg knows each file under one of its two spellings.
        candidates = [path, real, real.removeprefix("/usr"), "/usr" + path]
        owner = next((r for r in (run(["dpkg-query", "-S", c]) for c in candidates) if r.returncode == 0), None)
        if owner is None:
            raise AssertionError(f"no Debian package owns {path} ({soname} of {binary})")
        packages.add(owner.stdout.split(":")[0])
    return packages


class DockerfileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stages = dockerfile.stages(read(DOCKERFILE))
        cls.build = cls.stages[0]
        cls.runtime = cls.stages[-1]
        cls.ignore = dockerfile.DockerIgnore(read(DOCKERIGNORE))

    def copies(self, stage: dockerfile.Stage) -> list[dockerfile.Copy]:
        return [dockerfile.copy_args(i) for i in stage.all("COPY") + stage.all("ADD")]

    def context_copies(self) -> list[dockerfile.Copy]:
        return [c for stage in self.stages for c in self.copies(stage) if c.from_stage is None]

    def test_two_bookworm_stages_with_a_slim_runtime(self):
        self.assertGreaterEqual(len(self.stages), 2, "a build stage and a runtime stage")
        self.assertRegex(self.build.image, r"^debian:bookworm$")
        self.assertRegex(self.runtime.image, r"^debian:bookworm-slim$")

    def test_context_sources_exist_and_are_not_ignored(self):
        for copy in self.context_copies():
            for source in copy.sources:
                with self.subTest(source=source):
                    self.assertTrue(os.path.exists(os.path.join(REPO_ROOT, source)), f"COPY {source}: no such path")
                    files = context_files(source)
                    self.assertTrue(files, f"COPY {source}: nothing to copy")
                    ignored = [f for f in files if self.ignore.excludes(f)]
                    self.assertEqual(ignored, [], f"COPY {source}: .dockerignore leaves these out of the context")

    def test_stage_copies_name_earlier_stages(self):
        names = [s.name for s in self.stages]
        for i, stage in enumerate(self.stages):
            for copy in self.copies(stage):
                if copy.from_stage is not None:
                    self.assertIn(copy.from_stage, names[:i], f"COPY --from={copy.from_stage}: no earlier stage")

    def test_runtime_copies_the_binaries_the_build_stage_builds(self):
        workdir = self.build.all("WORKDIR")[-1].args
        build_run = next(i.args for i in self.build.all("RUN") if "cmake --build" in i.args)
        build_dir = re.search(r"cmake -S \S+ -B (\S+)", build_run)[1]
        targets = re.search(r"--target ([\w\- ]+)", build_run)[1].split()
        copied = [s for c in self.copies(self.runtime) if c.from_stage == self.build.name for s in c.sources]
        self.assertEqual(sorted(copied), sorted(f"{workdir}/{build_dir}/bin/{t}" for t in targets))
        self.assertEqual(sorted(targets), sorted(BINARIES))

    def test_copied_sources_are_enough_to_configure(self):
        """Configures the build from only what the build stage copies, with its flags.
        (Compiling it all is what a real `docker build` does; the configure step catches
        a directory the CMake files need but the Dockerfile does not copy.)"""
        configure = next(i.args for i in self.build.all("RUN") if "cmake -S" in i.args)
        argv = shlex.split(configure.split("&&")[0])
        self.assertEqual(argv[:2], ["cmake", "-S"])
        with tempfile.TemporaryDirectory(prefix="fg-docker-context-") as staged:
            for copy in self.copies(self.build):
                for source in copy.sources:
                    for f in context_files(source):
                        if not self.ignore.excludes(f):
                            target = os.path.join(staged, f)
                            os.makedirs(os.path.dirname(target), exist_ok=True)
                            shutil.copy2(os.path.join(REPO_ROOT, f), target)
            flags = [a for a in argv[2:] if a.startswith("-D") or a == "-G" or argv[argv.index(a) - 1] == "-G"]
            result = subprocess.run([tool("cmake"), "-S", staged, "-B", os.path.join(staged, "build"), *flags],
                                    capture_output=True, text=True, timeout=300)
            self.assertEqual(result.returncode, 0, f"cmake configure of the copied sources failed:\n"
                                                   f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
            # Optional directories are skipped, not errors: the targets must exist too.
            listed = run([tool("cmake"), "--build", os.path.join(staged, "build"), "--target", "help"]).stdout
            for target in BINARIES:
                self.assertRegex(listed, rf"(?m)^{target}:", f"the copied sources define no target {target}")

    def test_build_packages_are_the_projects_build_dependencies(self):
        """Names the CI installs through tools/setup.sh, so none is misspelt or missing from Debian."""
        listed = re.search(r"packages=\((.*?)\n\)", read(SETUP_SH), re.DOTALL)[1]
        setup_packages = set(re.sub(r"#.*", "", listed).split())
        build_packages = {p for i in self.build.all("RUN") for p in dockerfile.apt_packages(i)}
        self.assertTrue(build_packages)
        self.assertEqual(build_packages - setup_packages, set())

    def test_runtime_installs_exactly_the_libraries_the_binaries_load(self):
        missing = [path for path in BINARIES.values() if not os.path.exists(path)]
        if missing:
            self.skipTest(f"not built: {missing} (CTest passes the built binaries)")
        needed = set().union(*(needed_packages(path) for path in BINARIES.values()))
        installed = {p for i in self.runtime.all("RUN") for p in dockerfile.apt_packages(i)}
        self.assertEqual(needed - installed, set(), "the runtime stage lacks these shared libraries' packages")
        self.assertEqual(installed - needed, set(), "the runtime stage installs packages no binary loads")

    def test_runtime_runs_as_a_non_root_user(self):
        users = self.runtime.all("USER")
        self.assertTrue(users, "no USER in the runtime stage")
        self.assertNotIn(users[-1].args.split(":")[0], ("root", "0"))

    def test_healthcheck_probes_healthz_with_the_copied_script(self):
        checks = self.runtime.all("HEALTHCHECK")
        self.assertEqual(len(checks), 1)
        self.assertRegex(checks[0].args, r'CMD \["framegate-healthcheck", "/healthz"\]')
        script = [c for c in self.copies(self.runtime) if c.sources == ["deploy/healthcheck.sh"]]
        self.assertEqual([c.destination for c in script], ["/usr/local/bin/framegate-healthcheck"])
        self.assertTrue(os.access(HEALTHCHECK, os.X_OK), "COPY keeps the mode: the script must be executable")


if __name__ == "__main__":
    unittest.main()
