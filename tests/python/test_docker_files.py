"""docker/ checked statically (no Docker engine here; integration/test_cluster.py runs the same
topology without Docker): the Dockerfile parses (``docker_files.parse_dockerfile``), the compose
file is valid YAML (a strict subset parser: pyyaml is not a dependency) with the services
spark-master, spark-worker-1, spark-worker-2 and job, and the versions in both (Spark 4.2.0,
Java 17, deltalog) are the build's (pom.xml, python/pyproject.toml).
"""
from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from docker_files import parse_dockerfile, parse_yaml_subset

REPO = Path(__file__).resolve().parent.parent.parent
DOCKER = REPO / "docker"
SERVICES = {"spark-master", "spark-worker-1", "spark-worker-2", "job"}


def _pom() -> dict:
    root = ET.parse(REPO / "pom.xml").getroot()
    ns = {"m": root.tag[1:].split("}")[0]}
    props = root.find("m:properties", ns)
    return {"artifactId": root.find("m:artifactId", ns).text, "version": root.find("m:version", ns).text,
            "spark": props.find("m:spark.version", ns).text, "java": props.find("m:maven.compiler.release", ns).text}


def _pyproject() -> dict:
    text = (REPO / "python" / "pyproject.toml").read_text()
    return {"version": re.search(r'^version = "([^"]+)"', text, re.M).group(1),
            "pyspark": re.search(r'"pyspark==([^"]+)"', text).group(1),
            "python": re.search(r'requires-python = ">=(\d+\.\d+)"', text).group(1)}


@pytest.fixture(scope="module")
def dockerfile():
    return parse_dockerfile((DOCKER / "Dockerfile").read_text(), "docker/Dockerfile")


@pytest.fixture(scope="module")
def compose():
    return parse_yaml_subset((DOCKER / "docker-compose.yml").read_text(), "docker/docker-compose.yml")


def test_dockerfile_versions_are_the_builds(dockerfile):
    pom, py = _pom(), _pyproject()
    args = dockerfile.global_args
    assert args["SPARK_VERSION"] == pom["spark"] == py["pyspark"] == "4.2.0"
    assert args["JAVA_VERSION"] == pom["java"] == "17"
    assert args["DELTALOG_VERSION"] == pom["version"] == py["version"]
    assert [s.name for s in dockerfile.stages] == ["jar", "wheel", None]
    assert f"temurin-{pom['java']}" in dockerfile.stage("jar").image
    runtime = dockerfile.stages[-1]
    text = " ".join(i.args for i in runtime.instructions)
    assert f"openjdk-${{JAVA_VERSION}}-jre-headless" in text
    assert '"pyspark==${SPARK_VERSION}"' in text
    # the jar the wheel stage copies is the one Maven builds; the wheel bundles it as `make install` does
    copies = [i.args for i in dockerfile.stage("wheel").instructions if i.name == "COPY" and "--from=jar" in i.args]
    assert copies == [f"--from=jar /src/target/{pom['artifactId']}-${{DELTALOG_VERSION}}.jar ./python/deltalog/jars/"]
    py_images = [s.image for s in dockerfile.stages if s.image.startswith("python:")]
    assert py_images and all(tuple(map(int, re.match(r"python:(\d+)\.(\d+)", i).groups()))
                             >= tuple(map(int, py["python"].split("."))) for i in py_images)
    # SPARK_HOME is where pip puts pyspark for the runtime image's Python
    minor = re.match(r"python:(\d+\.\d+)", runtime.image).group(1)
    env = " ".join(i.args for i in runtime.instructions if i.name == "ENV")
    assert f"SPARK_HOME=/usr/local/lib/python{minor}/site-packages/pyspark" in env


def test_compose_services_and_versions(compose):
    pom = _pom()
    assert set(compose) <= {"name", "services", "volumes", "networks"}
    services = compose["services"]
    assert set(services) == SERVICES
    image = f"deltalog-spark:{pom['version']}"
    assert {s["image"] for s in services.values()} == {image}
    assert services["spark-master"]["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
    master = shlex.split(services["spark-master"]["command"])
    assert master[:2] == ["spark-class", "org.apache.spark.deploy.master.Master"]
    port = master[master.index("--port") + 1]
    url = f"spark://spark-master:{port}"
    for w in ("spark-worker-1", "spark-worker-2"):
        cmd = shlex.split(services[w]["command"])
        assert cmd[:2] == ["spark-class", "org.apache.spark.deploy.worker.Worker"] and cmd[-1] == url
        assert cmd[cmd.index("--host") + 1] == services[w]["hostname"] == w
        assert services[w]["depends_on"] == ["spark-master"]
    job = services["job"]
    assert shlex.split(job["command"]) == ["python", "-m", "deltalog.demo"]
    assert job["environment"]["DELTALOG_DEMO_MASTER"] == url
    assert job["environment"]["DELTALOG_DEMO_DIR"].startswith("/data/")
    assert f"spark.driver.host={job['hostname']}" in job["environment"]["PYSPARK_SUBMIT_ARGS"]
    assert set(job["depends_on"]) == {"spark-worker-1", "spark-worker-2"}
    # one shared volume, declared, mounted at /data everywhere
    for s in services.values():
        assert s["volumes"] == ["tables:/data"]
    assert set(compose["volumes"]) == {"tables"}


def test_compose_commands_exist_in_the_installation():
    """What the services run exists: pyspark's bin/spark-class (the image's Spark is pyspark's
    distribution, as here), the demo module and the environment variables it reads."""
    import pyspark
    assert (Path(pyspark.__file__).parent / "bin" / "spark-class").exists()
    demo = (REPO / "python" / "deltalog" / "demo.py").read_text()
    assert 'os.environ.get("DELTALOG_DEMO_MASTER"' in demo and 'os.environ.get("DELTALOG_DEMO_DIR")' in demo


@pytest.mark.parametrize("text, error", [
    ("RUN echo hi\n", "RUN before the first FROM"),
    ("FROM debian\nRUNN echo\n", "unknown instruction 'RUNN'"),
    ("FROM debian\nCMD [\"a\",\n", "not a JSON array"),
    ("FROM a AS x\nFROM b\nCOPY --from=y /a /b\n", "names no earlier stage"),
    ("FROM a AS x\nFROM b AS x\n", "used twice"),
    ("FROM python:${PY}\n", "$PY is not a declared build argument"),
    ("FROM debian\nRUN apt-get update \\\n", "line continuation"),
    ("# only a comment\n", "no FROM"),
])
def test_dockerfile_parser_refuses(text, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        parse_dockerfile(text)


def test_dockerfile_parser_reads_args_stages_and_continuations():
    d = parse_dockerfile("ARG V=1.2\n# c\nFROM img:${V} AS b\nRUN a \\\n  # skipped\n  && b\nFROM x\n"
                         "ARG V\nCOPY --from=b /o /o\nCMD [\"python\"]\n")
    assert d.global_args == {"V": "1.2"} and [s.image for s in d.stages] == ["img:1.2", "x"]
    assert d.stages[0].instructions[0].args == "a    && b"
    assert d.stages[1].args == {"V": "1.2"}


@pytest.mark.parametrize("text, error", [
    ("a: 1\na: 2\n", "duplicate key"),
    ("a:\n\t- x\n", "tab in indentation"),
    ("a: [1, 2]\n", "outside the subset"),
    ("a: &x 1\n", "outside the subset"),
    ("a:\n  b: 1\n c: 2\n", "indentation"),
    ("a: \"unterminated\n", "unterminated"),
    ("- a\nb: 1\n", "indentation below"),
])
def test_yaml_subset_parser_refuses(text, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        parse_yaml_subset(text)


def test_yaml_subset_parser_reads_nested_blocks():
    text = ("# top\nname: x\nservices:\n  a:\n    image: \"i:1\"  # tag\n    ports:\n      - \"80:80\"\n"
            "    env:\n      K: 'v # not a comment'\n    list:\n    - x\n    - y: 1\n      z: two\n  b:\n"
            "volumes:\n  t:\n")
    assert parse_yaml_subset(text) == {
        "name": "x",
        "services": {"a": {"image": "i:1", "ports": ["80:80"], "env": {"K": "v # not a comment"},
                           "list": ["x", {"y": 1, "z": "two"}]}, "b": None},
        "volumes": {"t": None}}


def test_build_context_keeps_what_the_dockerfile_copies(dockerfile):
    """docker/Dockerfile.dockerignore (BuildKit's per-Dockerfile ignore file) excludes everything
    but the sources the build copies from the context (no .venv/, target/ or corpus in it)."""
    lines = [l.strip() for l in (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    assert lines[0] == "*"
    kept = {l[1:].split("/")[0] for l in lines if l.startswith("!")}
    sources = set()
    for stage in dockerfile.stages:
        for i in stage.instructions:
            if i.name == "COPY" and "--from=" not in i.args:
                sources |= {p.split("/")[0] for p in i.args.split()[:-1]}
    assert sources == kept == {"pom.xml", "scala", "python"}
    for s in sources:
        assert (REPO / s).exists()
