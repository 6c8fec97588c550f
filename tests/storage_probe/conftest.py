"""Fixtures for the storage driver tests: real moto S3 and Azurite servers on loopback.

Session-scoped servers (started once, stopped by PID at the end); function-scoped
FileSettings dicts, each with its own PathPrefix so tests can list "their" objects.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
from azure.storage.blob import BlobServiceClient, ContainerClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/ for `servers`
import servers  # noqa: E402

S3_BUCKET = "authflow-files"
AZURE_CONTAINER = "authflow-files"
PLACEHOLDER = "*" * 32


def base_file_settings(**overrides: object) -> dict[str, object]:
    """A complete Mattermost-style FileSettings section; ``overrides`` win."""
    fs: dict[str, object] = {
        "DriverName": "local",
        "Directory": "./data/",
        "AmazonS3AccessKeyId": "",
        "AmazonS3SecretAccessKey": "",
        "AmazonS3Bucket": "",
        "AmazonS3PathPrefix": "",
        "AmazonS3Region": "",
        "AmazonS3Endpoint": "s3.amazonaws.com",
        "AmazonS3SSL": True,
        "AmazonS3SignV2": False,
        "AmazonS3SSE": False,
        "AmazonS3Trace": False,
        "AmazonS3RequestTimeoutMilliseconds": 30000,
        "AzureStorageAccount": "",
        "AzureAccessKey": "",
        "AzureContainer": "",
        "AzurePathPrefix": "",
        "AzureEndpoint": "",
        "AzureRequestTimeoutMilliseconds": 30000,
    }
    fs.update(overrides)
    return fs


@pytest.fixture
def file_settings():  # type: ignore[no-untyped-def]
    """The ``base_file_settings`` factory, for tests (conftest is not importable by name)."""
    return base_file_settings


# --- loopback only -------------------------------------------------------------------

_real_connect = socket.socket.connect


def _loopback_only_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]  # type: ignore[index]
        if not ipaddress.ip_address(host.split("%")[0]).is_loopback:
            raise AssertionError(f"storage test tried to connect to non-loopback {address!r}")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _loopback_guard() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _loopback_only_connect)
        yield


# --- moto (S3 with IAM authentication enforced) ----------------------------------------


@dataclass(frozen=True)
class S3Account:
    endpoint: str  # host:port, as AmazonS3Endpoint wants it
    access_key_id: str
    secret_access_key: str
    bucket: str

    def client(self):  # type: ignore[no-untyped-def]
        return boto3.session.Session().client(
            "s3",
            endpoint_url=f"http://{self.endpoint}",
            region_name="us-east-1",
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
        )


@pytest.fixture(scope="session")
def moto_server(_loopback_guard: None) -> Iterator[servers.ServerProcess]:
    server = servers.start_moto()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3_account(moto_server: servers.ServerProcess) -> S3Account:
    """A real IAM user with an access key and an S3 policy, and an existing bucket.

    Set up while moto still accepts any request, then moto is told to check every
    request's signature and IAM permissions from here on (moto accepts any key by default).
    """
    setup = {
        "endpoint_url": moto_server.url,
        "region_name": "us-east-1",
        "aws_access_key_id": "setup",
        "aws_secret_access_key": "setup",
    }
    session = boto3.session.Session()
    iam = session.client("iam", **setup)
    iam.create_user(UserName="authflow-files")
    iam.put_user_policy(
        UserName="authflow-files",
        PolicyName="s3-all",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
            }
        ),
    )
    key = iam.create_access_key(UserName="authflow-files")["AccessKey"]
    session.client("s3", **setup).create_bucket(Bucket=S3_BUCKET)
    request = urllib.request.Request(
        f"{moto_server.url}/moto-api/reset-auth",
        data=b"0",  # no request was authenticated so far; every one from now on is
        headers={"Content-Type": "text/plain"},  # a form type would swallow the body
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
    return S3Account(moto_server.address, key["AccessKeyId"], key["SecretAccessKey"], S3_BUCKET)


@pytest.fixture
def s3_settings(s3_account: S3Account) -> dict[str, object]:
    return base_file_settings(
        DriverName="amazons3",
        AmazonS3AccessKeyId=s3_account.access_key_id,
        AmazonS3SecretAccessKey=s3_account.secret_access_key,
        AmazonS3Bucket=s3_account.bucket,
        AmazonS3PathPrefix=f"t-{uuid.uuid4().hex}",
        AmazonS3Region="us-east-1",
        AmazonS3Endpoint=s3_account.endpoint,
        AmazonS3SSL=False,
        AmazonS3RequestTimeoutMilliseconds=5000,
    )


# --- Azurite ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AzureAccount:
    endpoint: str  # Azurite style: http://127.0.0.1:PORT/<account>
    account: str
    key: str
    container: str

    def container_client(self) -> ContainerClient:
        service = BlobServiceClient(
            self.endpoint, credential={"account_name": self.account, "account_key": self.key}
        )
        return service.get_container_client(self.container)


@pytest.fixture(scope="session")
def azurite_server(_loopback_guard: None) -> Iterator[servers.ServerProcess]:
    server = servers.start_azurite()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def azure_account(azurite_server: servers.ServerProcess) -> AzureAccount:
    account = AzureAccount(
        f"{azurite_server.url}/{servers.AZURITE_ACCOUNT}",
        servers.AZURITE_ACCOUNT,
        servers.AZURITE_KEY,
        AZURE_CONTAINER,
    )
    account.container_client().create_container()
    return account


@pytest.fixture
def azure_settings(azure_account: AzureAccount) -> dict[str, object]:
    return base_file_settings(
        DriverName="azureblob",
        AzureStorageAccount=azure_account.account,
        AzureAccessKey=azure_account.key,
        AzureContainer=azure_account.container,
        AzurePathPrefix=f"t-{uuid.uuid4().hex}",
        AzureEndpoint=azure_account.endpoint,
        AzureRequestTimeoutMilliseconds=5000,
    )


# --- local -----------------------------------------------------------------------------


@pytest.fixture
def local_settings(tmp_path: Path) -> dict[str, object]:
    directory = tmp_path / "files"
    directory.mkdir()
    return base_file_settings(DriverName="local", Directory=str(directory))


# --- all three, and what a test lists afterwards ---------------------------------------


@pytest.fixture(params=["local", "amazons3", "azureblob"])
def driver_settings(request: pytest.FixtureRequest) -> dict[str, object]:
    """FileSettings for each driver in turn, pointing at a working backend."""
    name = {"local": "local_settings", "amazons3": "s3_settings", "azureblob": "azure_settings"}
    return request.getfixturevalue(name[request.param])


@pytest.fixture
def stored_names(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A function: FileSettings -> every object name stored under its root/prefix, sorted.

    Reads the backend directly (os, boto3, azure-storage-blob), not through the driver.
    """

    def list_names(fs: dict[str, object]) -> list[str]:
        if fs["DriverName"] == "local":
            root = Path(str(fs["Directory"]))
            return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        if fs["DriverName"] == "amazons3":
            account: S3Account = request.getfixturevalue("s3_account")
            prefix = f"{fs['AmazonS3PathPrefix']}/"
            listing = account.client().list_objects_v2(Bucket=account.bucket, Prefix=prefix)
            return sorted(o["Key"][len(prefix):] for o in listing.get("Contents", []))
        azure: AzureAccount = request.getfixturevalue("azure_account")
        prefix = f"{fs['AzurePathPrefix']}/"
        blobs = azure.container_client().list_blobs(name_starts_with=prefix)
        return sorted(b.name[len(prefix):] for b in blobs)

    return list_names


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound (so nobody else takes it), not listening."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((servers.LOOPBACK, 0))
        yield sock.getsockname()[1]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts TCP connections (kernel backlog) but never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((servers.LOOPBACK, 0))
        sock.listen(16)
        yield sock.getsockname()[1]
