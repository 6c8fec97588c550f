"""Plain helpers for the admin API tests."""

from __future__ import annotations

from admin_api.models import ConfigRecord
from extensions import db


def stored_rows(app) -> list[tuple[str, str, bool | None]]:
    """(id, stored value, active) of every configuration row, sorted."""
    with app.app_context():
        rows = db.session.execute(db.select(ConfigRecord.id, ConfigRecord.value, ConfigRecord.active)).all()
        return sorted((r.id, r.value, r.active) for r in rows)


def stored_names(fs: dict) -> list[str]:
    """Every object stored under a FileSettings root/prefix, read from the backend directly."""
    from pathlib import Path

    if fs["DriverName"] == "local":
        root = Path(fs["Directory"])
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []
    if fs["DriverName"] == "amazons3":
        import boto3

        client = boto3.session.Session().client(
            "s3", endpoint_url=f"http://{fs['AmazonS3Endpoint']}", region_name="us-east-1",
            aws_access_key_id=fs["AmazonS3AccessKeyId"], aws_secret_access_key=fs["AmazonS3SecretAccessKey"])
        prefix = fs["AmazonS3PathPrefix"] + "/"
        listing = client.list_objects_v2(Bucket=fs["AmazonS3Bucket"], Prefix=prefix)
        client.close()
        return sorted(o["Key"][len(prefix):] for o in listing.get("Contents", []))
    from azure.storage.blob import ContainerClient

    prefix = fs["AzurePathPrefix"] + "/"
    with ContainerClient(fs["AzureEndpoint"], fs["AzureContainer"], credential={
            "account_name": fs["AzureStorageAccount"], "account_key": fs["AzureAccessKey"]}) as container:
        return sorted(b.name[len(prefix):] for b in container.list_blobs(name_starts_with=prefix))
