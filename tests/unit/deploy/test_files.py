"""The deploy files: they parse, name only real settings and commands, and keep their promises."""

from __future__ import annotations

import configparser
import ipaddress
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from payrecon.cli import COMMANDS
from payrecon.settings import Settings
from tests.support.processes import payrecon_env

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
ENV_EXAMPLE = ROOT / ".env.example"
KUBERNETES = DEPLOY / "kubernetes"
SYSTEMD = DEPLOY / "systemd"
SANDBOX_VARIABLES = {"PAYRECON_SANDBOX_SECRET_KEY", "PAYRECON_SANDBOX_PUBLIC_KEY"}
KNOWN_VARIABLES = {f"PAYRECON_{name.upper()}" for name in Settings.model_fields} | SANDBOX_VARIABLES
VARIABLE = re.compile(r"\bPAYRECON_[A-Z0-9_]*[A-Z0-9]")
UNITS = ["payrecon-migrate", "payrecon-receiver", "payrecon-reconciler", "payrecon-relay"]
# Every process the deploy files start must be one of these (with --host/--port etc. after).
EXPECTED_COMMANDS = {
    ("serve",),
    ("reconcile", "run"),
    ("relay", "run"),
    ("db", "upgrade"),
    ("sandbox",),
}


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        if os.environ.get("PAYRECON_REQUIRE_YAML") == "1":
            pytest.fail("PAYRECON_REQUIRE_YAML=1 but PyYAML is not installed")
        pytest.skip("PyYAML is not installed (pip install pyyaml, or the test extras)")
    return yaml


def _load_all(path: Path) -> list[Any]:
    return [doc for doc in _yaml().safe_load_all(path.read_text()) if doc is not None]


def _compose() -> dict[str, Any]:
    [document] = _load_all(DEPLOY / "compose.yaml")
    return dict(document)


def _manifests() -> dict[str, dict[str, Any]]:
    """Every Kubernetes object by `Kind/name`."""
    objects = {}
    for path in sorted(KUBERNETES.glob("*.yaml")):
        for document in _load_all(path):
            objects[f"{document['kind']}/{document['metadata']['name']}"] = document
    return objects


def _pod_containers(deployment: dict[str, Any]) -> list[dict[str, Any]]:
    spec = deployment["spec"]["template"]["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def _unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read_string((SYSTEMD / f"{name}.service").read_text())
    return parser


def _deploy_text_files() -> list[Path]:
    return [path for path in sorted(DEPLOY.rglob("*")) if path.is_file()]


def _seconds(value: str) -> float:
    """A systemd time span like `30s`, `5min` or `1min 30s` in seconds."""
    units = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", value):
        total += float(number) * units[unit]
    return total


# --- command lines -----------------------------------------------------------------------


def _after_payrecon(argv: list[str]) -> list[str] | None:
    """The arguments after a `payrecon` executable, or None when argv runs something else."""
    if argv and Path(argv[0]).name == "payrecon":
        return argv[1:]
    return None


def _command_lines() -> list[tuple[str, list[str]]]:
    """Every `payrecon …` argv in the deploy files, with where it came from."""
    found: list[tuple[str, list[str]]] = []
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        if line.startswith("CMD "):
            found.append(("Dockerfile CMD", json.loads(line.removeprefix("CMD "))))
    for line in (DEPLOY / "docker-entrypoint.sh").read_text().splitlines():
        words = line.strip()
        if words.startswith("set -- payrecon") or words.startswith("payrecon "):
            found.append(("docker-entrypoint.sh", shlex.split(words.removeprefix("set -- "))))
    for name, service in _compose()["services"].items():
        # Other images' commands (the brokers profile's NATS and Redis) are theirs.
        if "command" in service and str(service.get("image", "")).startswith("payrecon"):
            command = service["command"]
            argv = shlex.split(command) if isinstance(command, str) else list(command)
            found.append((f"compose {name}", argv))
    for unit in UNITS:
        found.append((f"{unit}.service", shlex.split(_unit(unit)["Service"]["ExecStart"])))
    for key, document in _manifests().items():
        if document["kind"] in {"Deployment", "Job", "CronJob", "StatefulSet"}:
            for container in _pod_containers(document):
                argv = [*container.get("command", []), *container.get("args", [])]
                found.append((f"{key} {container['name']}", [str(a) for a in argv]))
    return found


def _payrecon_executable() -> list[str]:
    beside = Path(sys.executable).parent / "payrecon"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "payrecon"]


@cache
def _help_exit_code(args: tuple[str, ...]) -> tuple[int, str]:
    result = subprocess.run(
        [*_payrecon_executable(), *args, "--help"],
        env=payrecon_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result.returncode, result.stderr[-500:]


def test_every_deploy_command_line_runs_a_payrecon_command() -> None:
    """Dockerfile, entrypoint, compose, systemd and Kubernetes start only real commands."""
    lines = _command_lines()
    seen: set[tuple[str, ...]] = set()
    for where, argv in lines:
        args = _after_payrecon(argv)
        assert args is not None, f"{where}: {argv} does not run payrecon"
        assert args and args[0] in COMMANDS, f"{where}: no command {args[:1]}"
        words = tuple(a for a in args[:2] if not a.startswith("-"))
        seen.add(words)
        # `--help` after the whole line: click rejects unknown commands and options first.
        code, stderr = _help_exit_code(tuple(args))
        assert code == 0, f"{where}: `payrecon {' '.join(args)} --help` exited {code}: {stderr}"
    assert seen >= EXPECTED_COMMANDS


# --- settings ------------------------------------------------------------------------------


def test_every_variable_in_the_deploy_files_is_a_setting() -> None:
    """No PAYRECON_* name anywhere under deploy/ or in .env.example is a typo."""
    for path in [*_deploy_text_files(), ENV_EXAMPLE]:
        unknown = set(VARIABLE.findall(path.read_text())) - KNOWN_VARIABLES
        assert not unknown, f"{path.relative_to(ROOT)}: not settings: {sorted(unknown)}"


def test_env_example_lists_every_setting_once() -> None:
    """.env.example names every setting (and the sandbox keys), each on one line."""
    names = re.findall(r"^#?\s*(PAYRECON_[A-Z0-9_]+)=", ENV_EXAMPLE.read_text(), re.MULTILINE)
    assert set(names) == KNOWN_VARIABLES
    assert len(names) == len(set(names)), "a variable is listed twice"


def test_env_example_values_are_the_defaults_but_its_placeholder() -> None:
    """Copied to .env with its one placeholder secret replaced, the example changes nothing
    else: its other values are the defaults."""
    key = "a-real-relay-key-of-at-least-32-characters"
    from_file = Settings(_env_file=ENV_EXAMPLE, relay_keys=key)
    assert from_file.model_dump() == Settings(_env_file=None, relay_keys=key).model_dump()
    active = re.findall(r"^(PAYRECON_[A-Z0-9_]+)=", ENV_EXAMPLE.read_text(), re.MULTILINE)
    assert "PAYRECON_DATABASE_URL" in active and "PAYRECON_PROVIDER_SECRET_KEY" not in active


def test_env_example_as_shipped_is_refused_naming_its_placeholder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Loaded as-is, .env.example stops payrecon naming PAYRECON_RELAY_KEYS: a placeholder
    secret is never used for real."""
    from payrecon.errors import ConfigError
    from payrecon.settings import load_settings

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(ENV_EXAMPLE.read_text())
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.variable == "PAYRECON_RELAY_KEYS"
    assert "placeholder" in str(caught.value)


def test_shipped_kubernetes_secrets_are_placeholders_payrecon_refuses() -> None:
    """Every value of deploy/kubernetes/secret.yaml is a placeholder, and each one alone is
    refused naming its variable."""
    from payrecon.errors import ConfigError
    from payrecon.settings import load_settings

    [secret] = _load_all(KUBERNETES / "secret.yaml")
    values = dict(secret["stringData"])
    assert values
    for name, value in values.items():
        assert re.search("change[-_]?me", value, re.IGNORECASE), name
        with pytest.raises(ConfigError) as caught:
            load_settings(**{name.removeprefix("PAYRECON_").lower(): value})
        assert caught.value.variable == name


# --- the image -----------------------------------------------------------------------------


def test_dockerfile_is_multi_stage_non_root_with_a_healthcheck() -> None:
    """The image builds a wheel, runs as a non-root user and checks /healthz with Python."""
    text = (DEPLOY / "Dockerfile").read_text()
    instructions = [line.split(None, 1) for line in text.splitlines() if line[:1].isalpha()]
    froms = [rest for word, rest in instructions if word == "FROM"]
    assert len(froms) >= 2 and all(f.startswith("python:3.11-slim") for f in froms)
    users = [rest.strip() for word, rest in instructions if word == "USER"]
    assert users and users[-1].split(":")[0] not in {"root", "0"}
    [healthcheck] = [rest for word, rest in instructions if word == "HEALTHCHECK"]
    assert "/healthz" in text and "python" in text.split("HEALTHCHECK", 1)[1].split("\n\n")[0]
    assert "curl" not in healthcheck
    assert ("EXPOSE", "8000") in [(w, r.strip()) for w, r in instructions]
    assert any(w == "ENTRYPOINT" and "docker-entrypoint.sh" in r for w, r in instructions)
    assert "pip wheel" in text


def test_entrypoint_migrates_then_execs_the_command() -> None:
    """The entrypoint upgrades the database, then replaces itself with the given command."""
    script = DEPLOY / "docker-entrypoint.sh"
    text = script.read_text()
    assert text.startswith("#!/bin/sh") and os.access(script, os.X_OK)
    assert text.index("payrecon db upgrade\n") < text.index('exec "$@"')


def test_dockerignore_keeps_the_context_small() -> None:
    """The Dockerfile's own ignore file leaves out the venv, git history and local databases."""
    ignored = (DEPLOY / "Dockerfile.dockerignore").read_text().split()
    assert {"**/.venv", "**/.git", "**/*.db", ".env"} <= set(ignored)


# --- dependencies and installs -----------------------------------------------------------

# Versions below these break payrecon: standardwebhooks 1.0.x's verify() lacks the keyword the
# receiver passes (a validly signed delivery gets 401); starlette before 1.0.1 is open to the
# public advisories on Host header handling; pydantic-settings before 2.7 has no NoDecode.
MINIMUMS = {"standardwebhooks": "1.1.0", "starlette": "1.0.1", "pydantic-settings": "2.7"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict[str, Any]:
    import tomllib

    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"])


def _pins(path: Path) -> dict[str, str]:
    """Package → exact version of a constraints file (one `name==version` a line)."""
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and _normal(name) not in pins, f"{path.name}: bad line {line!r}"
            pins[_normal(name)] = version.strip()
    return pins


def _requirements(specs: list[str]) -> dict[str, Any]:
    from packaging.requirements import Requirement

    return {_normal(r.name): r for r in map(Requirement, specs)}


def test_dependency_minimums_exclude_the_broken_versions() -> None:
    """pyproject.toml admits no standardwebhooks before 1.1.0 nor starlette before 1.0.1."""
    from packaging.version import Version

    requirements = _requirements(_project()["dependencies"])
    for name, minimum in MINIMUMS.items():
        lower = [s for s in requirements[name].specifier if s.operator in {">=", "=="}]
        assert lower, f"{name} has no lower bound"
        assert all(Version(s.version) >= Version(minimum) for s in lower), (name, lower)


def test_every_dependency_is_pinned_within_its_bounds() -> None:
    """constraints.txt pins every runtime dependency, constraints-dev.txt every extra, in range."""
    runtime, dev = _pins(ROOT / "constraints.txt"), _pins(ROOT / "constraints-dev.txt")
    assert not runtime.keys() & dev.keys(), "a package pinned twice"
    project = _project()
    extras = [s for group in project["optional-dependencies"].values() for s in group]
    checks = [(runtime, _project()["dependencies"]), ({**runtime, **dev}, extras)]
    for pins, specs in checks:
        for name, requirement in _requirements(specs).items():
            if name == "payrecon":  # `payrecon[test]` inside the dev extra
                continue
            assert name in pins, f"{name} is not pinned"
            assert requirement.specifier.contains(pins[name]), (name, pins[name])


def test_make_and_the_dockerfile_install_from_the_constraints() -> None:
    """Every pip install in the Makefile and the Dockerfile is bound by constraints.txt."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r"^COPY [^\n]*\bconstraints\.txt\b", dockerfile, re.M)
    docker_installs = re.findall(r"pip (?:wheel|install) [^\n]*", dockerfile)
    assert len(docker_installs) == 2
    assert all("-c " in line and "constraints.txt" in line for line in docker_installs)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^CONSTRAINTS := constraints\.txt$", makefile, re.M)
    assert re.search(r"^constraints:", makefile, re.M), "no target to refresh the constraints"
    # Installs into the project's venv; `make constraints` resolves afresh on purpose.
    installs = [
        line for line in makefile.splitlines() if "$(BIN)/pip install" in line and "-e " in line
    ]
    assert len(installs) >= 2
    assert all("-c $(CONSTRAINTS)" in line for line in installs), installs


def _make_dry_run(target: str) -> str:
    """The commands `make TARGET` would run from scratch (nothing is executed)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    result = subprocess.run(
        ["make", "--dry-run", "--always-make", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout


def test_make_demo_installs_the_runtime_only() -> None:
    """`make demo` creates the venv and installs payrecon without the test or dev extras."""
    commands = _make_dry_run("demo")
    assert "-m venv .venv" in commands
    assert re.search(r"pip install .*-e \.$", commands, re.M)
    assert "[dev]" not in commands and "[test]" not in commands


@pytest.mark.parametrize("target", ["test", "lint", "bench"])
def test_make_test_lint_and_bench_add_the_dev_extras(target: str) -> None:
    """The targets that need pytest, ruff or mypy install the dev extras into the same venv."""
    commands = _make_dry_run(target)
    assert "-m venv .venv" in commands
    assert re.search(r"pip install .*-c constraints-dev\.txt.*-e '\.\[dev\]'", commands)


# --- compose -------------------------------------------------------------------------------


def test_compose_topology() -> None:
    """PostgreSQL, a one-shot migrate, two receivers behind the proxy, a reconciler, a relay
    worker, a sandbox."""
    compose = _compose()
    services = compose["services"]
    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:16")
    assert postgres["healthcheck"]["test"] and postgres["volumes"]
    assert services["migrate"]["command"] == ["payrecon", "db", "upgrade"]
    assert services["migrate"]["restart"] == "no"
    receivers = [name for name in services if name.startswith("receiver")]
    assert len(receivers) == 2
    assert services["reconciler"]["command"] == ["payrecon", "reconcile", "run"]
    assert services["relay"]["command"] == ["payrecon", "relay", "run"]
    sandbox = services["sandbox"]
    assert sandbox["profiles"] == ["sandbox"]
    webhook_url = sandbox["command"][sandbox["command"].index("--webhook-url") + 1]
    assert webhook_url.startswith("http://proxy/webhook")
    for name in [*receivers, "reconciler", "relay"]:
        assert services[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
        assert services[name]["environment"]["PAYRECON_DATABASE_URL"].startswith(
            "postgresql+psycopg://"
        )
    provider_url = services["reconciler"]["environment"]["PAYRECON_PROVIDER_BASE_URL"]
    assert provider_url == "${PAYRECON_PROVIDER_BASE_URL:-http://sandbox:8100}"


def test_compose_brokers_profile_has_rabbitmq_and_nats_with_jetstream() -> None:
    """`--profile brokers` adds RabbitMQ, NATS with JetStream and Redis on the private network,
    none published on the host, none started without the profile."""
    services = _compose()["services"]
    for name in ("rabbitmq", "nats", "redis"):
        assert services[name]["profiles"] == ["brokers"]
        assert "ports" not in services[name]
        assert services[name]["networks"] == ["payrecon"]
    assert services["rabbitmq"]["image"].startswith("rabbitmq:")
    assert "-js" in services["nats"]["command"]


def test_compose_receivers_trust_exactly_the_proxy() -> None:
    """The receivers believe X-Forwarded-For from the proxy's fixed address and nothing else."""
    compose = _compose()
    services = compose["services"]
    [subnet] = [c["subnet"] for c in compose["networks"]["payrecon"]["ipam"]["config"]]
    proxy_address = services["proxy"]["networks"]["payrecon"]["ipv4_address"]
    assert ipaddress.ip_address(proxy_address) in ipaddress.ip_network(subnet)
    sandbox_address = services["sandbox"]["networks"]["payrecon"]["ipv4_address"]
    for name in ("receiver-1", "receiver-2"):
        environment = services[name]["environment"]
        assert environment["PAYRECON_TRUSTED_PROXIES"] == proxy_address
        assert environment["PAYRECON_WEBHOOK_ALLOWED_IPS"].endswith(f":-{sandbox_address}}}")
    config = (DEPLOY / "nginx" / "payrecon.conf").read_text()
    upstreams = re.findall(r"^\s*server\s+([\w-]+):8000", config, re.MULTILINE)
    assert upstreams == ["receiver-1", "receiver-2"]
    mounted = services["proxy"]["volumes"][0].split(":")[0]
    assert (DEPLOY / mounted).resolve() == DEPLOY / "nginx" / "payrecon.conf"


# --- nginx ---------------------------------------------------------------------------------


def _directives(path: Path) -> list[str]:
    return [
        " ".join(line.split("#", 1)[0].split())
        for line in path.read_text().splitlines()
        if line.split("#", 1)[0].strip()
    ]


@pytest.mark.parametrize("name", ["payrecon.conf", "tls-snippet.conf"])
def test_nginx_overwrites_x_forwarded_for(name: str) -> None:
    """The proxy replaces X-Forwarded-For with the peer instead of appending the client's."""
    directives = _directives(DEPLOY / "nginx" / name)
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in directives
    assert not any("$proxy_add_x_forwarded_for" in d for d in directives)
    assert "client_max_body_size 64k;" in directives
    assert Settings(_env_file=None).max_body_bytes == 64 * 1024


def test_tls_snippet_terminates_tls_and_fences_metrics() -> None:
    """HTTPS on 443 with HSTS; /metrics answers internal addresses only."""
    text = (DEPLOY / "nginx" / "tls-snippet.conf").read_text()
    directives = _directives(DEPLOY / "nginx" / "tls-snippet.conf")
    assert "listen 443 ssl;" in directives
    assert any(d.startswith("add_header Strict-Transport-Security") for d in directives)
    metrics = text.split("location = /metrics {", 1)[1].split("}", 1)[0]
    assert "deny all;" in metrics and "allow 127.0.0.1;" in metrics
    assert "location /api/" in text and "location /reports" in text


# --- systemd -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", UNITS)
def test_systemd_units_are_hardened(name: str) -> None:
    """Each unit runs as its own user with the environment file and a strict sandbox."""
    unit = _unit(name)
    service = unit["Service"]
    assert unit["Unit"]["Description"] and unit["Install"]["WantedBy"] == "multi-user.target"
    assert service["User"] == "payrecon"
    assert service["EnvironmentFile"] == "/etc/payrecon/payrecon.env"
    assert service["NoNewPrivileges"] == "yes" and service["PrivateTmp"] == "yes"
    assert service["ProtectSystem"] == "strict"
    assert service["ReadWritePaths"] == service["WorkingDirectory"] == "/var/lib/payrecon"
    assert service["CapabilityBoundingSet"] == ""


def test_systemd_migrate_is_a_oneshot_the_others_require() -> None:
    """Receiver, reconciler and relay worker start after a successful migration and restart on
    failure."""
    assert _unit("payrecon-migrate")["Service"]["Type"] == "oneshot"
    for name in ("payrecon-receiver", "payrecon-reconciler", "payrecon-relay"):
        unit = _unit(name)
        assert "payrecon-migrate.service" in unit["Unit"]["Requires"].split()
        assert "payrecon-migrate.service" in unit["Unit"]["After"].split()
        assert unit["Service"]["Restart"] == "on-failure"
        assert unit["Service"]["KillSignal"] == "SIGTERM"
    receiver_stop = _seconds(_unit("payrecon-receiver")["Service"]["TimeoutStopSec"])
    reconciler_stop = _seconds(_unit("payrecon-reconciler")["Service"]["TimeoutStopSec"])
    relay_stop = _seconds(_unit("payrecon-relay")["Service"]["TimeoutStopSec"])
    # uvicorn drains for 10 s; a reconciler pass can take minutes; a relay attempt 15 s.
    assert receiver_stop > 10 and reconciler_stop >= 120 and relay_stop > 15


# --- Kubernetes ----------------------------------------------------------------------------


def test_kubernetes_manifests_parse_and_live_in_one_namespace() -> None:
    """Every manifest is a named object in the payrecon namespace."""
    objects = _manifests()
    assert {
        "Namespace/payrecon",
        "Secret/payrecon-secrets",
        "ConfigMap/payrecon-config",
        "Deployment/payrecon-receiver",
        "Service/payrecon-receiver",
        "Deployment/payrecon-reconciler",
        "Deployment/payrecon-relay",
    } <= set(objects)
    for key, document in objects.items():
        assert document["apiVersion"], key
        if document["kind"] != "Namespace":
            assert document["metadata"]["namespace"] == "payrecon", key


def test_kubernetes_secret_holds_the_secrets_and_config_the_rest() -> None:
    """Keys, tokens and the database URL are in the Secret; the ConfigMap holds no secret."""
    objects = _manifests()
    secret = objects["Secret/payrecon-secrets"]["stringData"]
    assert set(secret) == {
        "PAYRECON_DATABASE_URL",
        "PAYRECON_PROVIDER_SECRET_KEY",
        "PAYRECON_ADMIN_TOKEN",
        "PAYRECON_WEBHOOK_TOKEN",
        "PAYRECON_RELAY_KEYS",
    }
    config = objects["ConfigMap/payrecon-config"]["data"]
    assert not set(config) & set(secret)
    assert all(isinstance(value, str) for value in config.values())
    # Together, with their placeholders filled in, they are valid settings: no name or format
    # is wrong (as shipped, the placeholders are refused: the test below).
    values = {
        k.removeprefix("PAYRECON_").lower(): re.sub("change[-_]?me", "Real0Value", v, flags=re.I)
        for k, v in {**config, **secret}.items()
    }
    Settings(_env_file=None, **values)


def test_kubernetes_receiver_deployment() -> None:
    """Two non-root replicas with probes, resources and a migrating initContainer."""
    objects = _manifests()
    deployment = objects["Deployment/payrecon-receiver"]
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 2
    assert pod["securityContext"]["runAsNonRoot"] is True
    [init] = pod["initContainers"]
    assert init["command"] == ["payrecon", "db", "upgrade"]
    [container] = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for each in _pod_containers(deployment):
        assert each["securityContext"]["readOnlyRootFilesystem"] is True
        assert each["securityContext"]["allowPrivilegeEscalation"] is False
        assert each["resources"]["requests"] and each["resources"]["limits"]
        refs = {next(iter(ref.values()))["name"] for ref in each["envFrom"]}
        assert refs == {"payrecon-config", "payrecon-secrets"}
    service = objects["Service/payrecon-receiver"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] == container["ports"][0]["name"]


def test_kubernetes_reconciler_deployment() -> None:
    """The reconciler runs `reconcile run` with time to finish its pass on shutdown."""
    deployment = _manifests()["Deployment/payrecon-reconciler"]
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] >= 1
    assert pod["containers"][0]["command"] == ["payrecon", "reconcile", "run"]
    assert pod["terminationGracePeriodSeconds"] >= 120
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_kubernetes_relay_deployment() -> None:
    """The relay worker runs `relay run`, non-root, with time for in-flight attempts to end."""
    deployment = _manifests()["Deployment/payrecon-relay"]
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] >= 1
    assert pod["containers"][0]["command"] == ["payrecon", "relay", "run"]
    # An attempt lasts at most PAYRECON_RELAY_TIMEOUT (15 s by default).
    assert pod["terminationGracePeriodSeconds"] > 15
    assert pod["securityContext"]["runAsNonRoot"] is True


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_knows_every_directive(tmp_path: Path) -> None:
    """systemd itself parses the units without an unknown key or a bad value."""
    for name in UNITS:
        (tmp_path / f"{name}.service").write_text((SYSTEMD / f"{name}.service").read_text())
    result = subprocess.run(
        ["systemd-analyze", "verify", *(str(tmp_path / f"{n}.service") for n in UNITS)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # The one expected complaint: /opt/payrecon/venv/bin/payrecon is not installed here.
    problems = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if line.strip() and "is not executable" not in line
    ]
    assert not problems, problems


# --- the entrypoint, run for real with a stand-in `payrecon` ------------------------------


def _run_entrypoint(tmp_path: Path, *args: str, **env: str) -> tuple[int, list[str]]:
    """Run docker-entrypoint.sh with a fake `payrecon` that logs its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    fake = bin_dir / "payrecon"
    fake.write_text(
        '#!/bin/sh\necho "$*" >> "$CALLS"\n'
        'if [ "$*" = "db upgrade" ] && [ -n "${FAIL_UPGRADE:-}" ]; then exit 1; fi\n'
    )
    fake.chmod(0o755)
    environment = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "CALLS": str(calls),
        **env,
    }
    result = subprocess.run(
        ["sh", str(DEPLOY / "docker-entrypoint.sh"), *args],
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return result.returncode, calls.read_text().splitlines()


def test_entrypoint_default_migrates_then_serves(tmp_path: Path) -> None:
    """With no command, the container upgrades the database, then runs the receiver."""
    code, calls = _run_entrypoint(tmp_path)
    assert code == 0
    assert calls == ["db upgrade", "serve --host 0.0.0.0 --port 8000"]


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (("payrecon", "reconcile", "run"), {}, ["db upgrade", "reconcile run"]),
        (("payrecon", "db", "upgrade"), {}, ["db upgrade"]),
        (("payrecon", "sandbox", "--port", "8100"), {}, ["sandbox --port 8100"]),
        (("payrecon", "serve"), {"MIGRATE_ON_START": "0"}, ["serve"]),
    ],
)
def test_entrypoint_migrates_only_when_needed(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], expected: list[str]
) -> None:
    """The upgrade runs once, not for the sandbox, and not when switched off."""
    code, calls = _run_entrypoint(tmp_path, *args, **env)
    assert (code, calls) == (0, expected)


def test_entrypoint_stops_when_the_upgrade_fails(tmp_path: Path) -> None:
    """A failed migration stops the container before the command starts."""
    code, calls = _run_entrypoint(tmp_path, "payrecon", "serve", FAIL_UPGRADE="1")
    assert code != 0 and calls == ["db upgrade"]
