"""Where an ``abfs://`` / ``abfss://`` path's account, endpoint and key come from.

A path names its container and account the way Hadoop's ABFS does:
``abfs[s]://container@account.dfs.core.windows.net/path`` (``.blob.`` is taken too). The key
and the endpoint come from, first match wins:

1. options: ``fs.azure.account.key.<account>.dfs.core.windows.net`` (Hadoop ABFS's name; any
   ``fs.azure.account.key.<account>.…`` suffix), ``fs.azure.account.key`` (any account),
   ``fs.azure.blob.endpoint`` (the account's Blob service URL, as a connection string's
   ``BlobEndpoint``: ``http://127.0.0.1:10000/devstoreaccount1`` for the Azurite emulator);
2. the environment: ``AZURE_STORAGE_CONNECTION_STRING`` (``AccountName``, ``AccountKey``,
   ``BlobEndpoint``, ``DefaultEndpointsProtocol``, ``EndpointSuffix``), else
   ``AZURE_STORAGE_KEY`` / ``AZURE_STORAGE_ACCOUNT_KEY`` (the Azure CLI's), for the account
   ``AZURE_STORAGE_ACCOUNT`` names, or any when unset;
3. nothing: pyarrow's ``FileSystem.from_uri`` and its default credential chain (reads only).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Optional
from urllib.parse import urlsplit

from .. import options as opt
from ..exceptions import InvalidOptionError

KEY_OPTION = "fs.azure.account.key"
ENDPOINT_OPTION = "fs.azure.blob.endpoint"


@dataclass(frozen=True)
class AzureSettings:
    """One storage account: its name, Shared Key (base64) and Blob service URL."""

    account: str
    key: Optional[str] = None
    endpoint: Optional[str] = None  # "http(s)://host[:port][/account]"; None: Azure's public one

    @property
    def explicit(self) -> bool:
        return self.key is not None or self.endpoint is not None

    @property
    def blob_endpoint(self) -> str:
        return (self.endpoint or f"https://{self.account}.blob.core.windows.net").rstrip("/")

    def arrow_kwargs(self) -> dict:
        """Keyword arguments of ``pyarrow.fs.AzureFileSystem``."""
        kw: dict = {"account_name": self.account}
        if self.key:
            kw["account_key"] = self.key
        if self.endpoint:
            parts = urlsplit(self.endpoint)
            host = parts.netloc
            # an emulator names the account in the path; Azure in the host (pyarrow: ".suffix")
            authority = host if parts.path.strip("/") else "." + host.split(".", 1)[-1]
            for service in ("blob", "dfs"):
                kw[f"{service}_storage_authority"] = authority
                kw[f"{service}_storage_scheme"] = parts.scheme
        return kw


def container_and_account(uri: str) -> Optional[tuple[str, str, str]]:
    """``(container, account, path below the container)`` of ``abfs[s]://container@account.…/p``;
    None for other forms (left to pyarrow)."""
    parts = urlsplit(uri)
    if "@" not in parts.netloc:
        return None
    container, _, host = parts.netloc.rpartition("@")
    account = host.split(".", 1)[0].split(":", 1)[0]
    if not container or not account:
        raise InvalidOptionError(f"Cannot use {uri}: write abfs[s]://container@account."
                                 "dfs.core.windows.net/path")
    return container, account, parts.path.strip("/")


def _endpoint(value: str, name: str) -> str:
    value = value.strip().rstrip("/")
    if urlsplit(value).scheme.lower() not in ("http", "https"):
        raise InvalidOptionError(f"Option {name}='{value}' must be an http(s) address, e.g. "
                                 "http://127.0.0.1:10000/devstoreaccount1")
    return value


def _key_option(options: Mapping[str, str], account: str) -> Optional[str]:
    prefix = f"{KEY_OPTION}.{account}.".lower()
    for k, v in options.items():
        if str(k).lower().startswith(prefix) and str(v).strip():
            return str(v).strip()
    return opt.get_str(options, KEY_OPTION)


def connection_string(text: str) -> dict[str, str]:
    """``Name=value;…`` pairs of an Azure Storage connection string."""
    out = {}
    for part in text.split(";"):
        name, eq, value = part.partition("=")
        if eq:
            out[name.strip().lower()] = value.strip()
    return out


def from_environment(account: str, environ: Optional[Mapping[str, str]] = None
                     ) -> tuple[Optional[str], Optional[str]]:
    """(key, endpoint) for ``account`` from the environment (see the module docstring)."""
    env = os.environ if environ is None else environ
    cs = connection_string(env.get("AZURE_STORAGE_CONNECTION_STRING", ""))
    if cs and cs.get("accountname", account) == account:
        endpoint = cs.get("blobendpoint")
        if not endpoint and "endpointsuffix" in cs:
            scheme = cs.get("defaultendpointsprotocol", "https")
            endpoint = f"{scheme}://{account}.blob.{cs['endpointsuffix']}"
        return cs.get("accountkey") or None, endpoint or None
    named = env.get("AZURE_STORAGE_ACCOUNT")
    key = env.get("AZURE_STORAGE_KEY") or env.get("AZURE_STORAGE_ACCOUNT_KEY")
    if key and named in (None, "", account):
        return key, None
    return None, None


def resolve(account: str, options: Mapping[str, str],
            environ: Optional[Mapping[str, str]] = None) -> AzureSettings:
    """The settings for ``account``: options first, then the environment."""
    key = _key_option(options, account)
    endpoint = opt.get_str(options, ENDPOINT_OPTION)
    env_key, env_endpoint = from_environment(account, environ)
    return AzureSettings(account, key or env_key,
                         _endpoint(endpoint, ENDPOINT_OPTION) if endpoint
                         else env_endpoint.rstrip("/") if env_endpoint else None)
