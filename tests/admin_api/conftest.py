"""Fixtures for the admin API tests: callers, configuration, licenses, and the real storage
backends (moto's S3 server with IAM auth enforced, Azurite) started once per session on
loopback ports and stopped by PID.
"""

from __future__ import annotations

import json
import urllib.request
import uuid
from dataclasses import dataclass

import boto3
import pytest

from admin_api import config_store
from extensions import db
from schemas.config import defaults
from tests import servers

# No password: these callers use tokens, and skipping Argon2 keeps each test fast.
_NO_PASSWORD = {"password": "", "auth_service": "ldap"}


@pytest.fixture
def admin_headers(make_user, make_pat) -> dict:
    return {"Authorization": "Bearer " + make_pat(make_user(admin=True, **_NO_PASSWORD))}


@pytest.fixture
def user_headers(make_user, make_pat) -> dict:
    return {"Authorization": "Bearer " + make_pat(make_user(**_NO_PASSWORD))}


@pytest.fixture
def set_config(app):
    """set_config({"FileSettings": {...}}): patch the stored configuration and commit."""

    def run(partial: dict) -> dict:
        with app.app_context():
            saved = config_store.patch_config(partial, actor="test")
            db.session.commit()
            return saved

    return run


@pytest.fixture
def other_app(app_config):
    """other_app(**overrides): a second app on the same database, like another worker.

    Its engine is disposed afterwards so no pooled connection outlives the test.
    """
    from app import create_app

    made = []

    def make(**overrides):
        application = create_app({**app_config, **overrides})
        made.append(application)
        return application

    yield make
    for application in made:
        with application.app_context():
            db.session.remove()
            db.engine.dispose()


@pytest.fixture
def license_key(app, tmp_path, monkeypatch):
    """A trusted Ed25519 key: returns the PEM file path; the app trusts its public key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from admin_api.license_services import public_key_text

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path = tmp_path / "license-key.pem"
    path.write_bytes(pem)
    monkeypatch.setitem(app.config, "LICENSE_PUBLIC_KEYS", public_key_text(pem))
    return path


@pytest.fixture
def install_license(app, license_key):
    """install_license(features=[...], users=N): sign with the trusted key and install."""
    from admin_api import license_services

    def run(**kw) -> dict:
        with app.app_context():
            signed = license_services.issue_license(license_key.read_bytes(), **kw)
            doc = license_services.install_license(json.dumps(signed).encode())
            db.session.commit()
            return doc

    return run


# --- storage backends ----------------------------------------------------------------------

S3_BUCKET = "authflow-admin"
AZURE_CONTAINER = "authflow-admin"


@dataclass(frozen=True)
class Backends:
    s3_endpoint: str  # host:port
    s3_key_id: str
    s3_secret: str
    azure_endpoint: str  # http://127.0.0.1:PORT/<account>


@pytest.fixture(scope="session")
def backends():
    """moto (an IAM user with an S3 policy; signatures checked) and Azurite, both with a bucket/container."""
    moto = servers.start_moto()
    azurite = None
    try:
        azurite = servers.start_azurite()
        setup = {"endpoint_url": moto.url, "region_name": "us-east-1",
                 "aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
        session = boto3.session.Session()
        iam = session.client("iam", **setup)
        iam.create_user(UserName="authflow")
        iam.put_user_policy(UserName="authflow", PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="authflow")["AccessKey"]
        session.client("s3", **setup).create_bucket(Bucket=S3_BUCKET)
        # From here on moto checks every request's signature and IAM permissions.
        request = urllib.request.Request(f"{moto.url}/moto-api/reset-auth", data=b"0",
                                         headers={"Content-Type": "text/plain"}, method="POST")
        urllib.request.urlopen(request, timeout=5).close()

        from azure.storage.blob import BlobServiceClient

        azure_endpoint = f"{azurite.url}/{servers.AZURITE_ACCOUNT}"
        service = BlobServiceClient(azure_endpoint, credential={
            "account_name": servers.AZURITE_ACCOUNT, "account_key": servers.AZURITE_KEY})
        service.create_container(AZURE_CONTAINER)
        service.close()
        yield Backends(moto.address, key["AccessKeyId"], key["SecretAccessKey"], azure_endpoint)
    finally:
        moto.stop()
        if azurite is not None:
            azurite.stop()


@pytest.fixture
def file_settings(backends, tmp_path):
    """file_settings(driver, **overrides): a complete, working FileSettings section."""

    def make(driver: str, **overrides) -> dict:
        fs = defaults()["FileSettings"]
        prefix = f"t-{uuid.uuid4().hex[:12]}"
        if driver == "local":
            fs.update(DriverName="local", Directory=str(tmp_path / "files"))
        elif driver == "amazons3":
            fs.update(DriverName="amazons3", AmazonS3AccessKeyId=backends.s3_key_id,
                      AmazonS3SecretAccessKey=backends.s3_secret, AmazonS3Bucket=S3_BUCKET,
                      AmazonS3PathPrefix=prefix, AmazonS3Region="us-east-1",
                      AmazonS3Endpoint=backends.s3_endpoint, AmazonS3SSL=False,
                      AmazonS3RequestTimeoutMilliseconds=5000)
        else:
            fs.update(DriverName="azureblob", AzureStorageAccount=servers.AZURITE_ACCOUNT,
                      AzureAccessKey=servers.AZURITE_KEY, AzureContainer=AZURE_CONTAINER,
                      AzurePathPrefix=prefix, AzureEndpoint=backends.azure_endpoint,
                      AzureRequestTimeoutMilliseconds=5000)
        fs.update(overrides)
        return fs

    return make


@pytest.fixture
def local_files(set_config, tmp_path):
    """The running configuration uses the local driver in a temporary folder."""
    directory = tmp_path / "running-files"
    set_config({"FileSettings": {"DriverName": "local", "Directory": str(directory)}})
    return directory


@pytest.fixture
def file_logging(app, set_config, tmp_path):
    """Turn on file logging into a temporary folder now; off again afterwards."""
    import logs

    folder = tmp_path / "logs"
    set_config({"LogSettings": {"EnableFile": True, "FileLocation": str(folder), "FileLevel": "INFO"}})
    with app.app_context():
        logs.refresh_from_config(app, force=True)
    yield folder / "authflow.log"
    logs.apply_settings(app, {"EnableFile": False})
    app.extensions.get("authflow_logs", {})["checked"] = 0.0
