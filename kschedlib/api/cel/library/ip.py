"""Kubernetes' IP and CIDR libraries."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from kschedlib.api.cel.errors import CELError
from kschedlib.api.cel.library.functions import Impl, _cost_recv, _want, define
from kschedlib.api.cel.library.values import CIDRValue, IPValue, no_overload


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if "%" in s:
        raise CELError("IP address with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CELError(f"IP Address {s!r} parse error during conversion from string: "
                       f"ParseAddr({s!r}): unable to parse IP") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELError("IPv4-mapped IPv6 address is not allowed")
    return addr


def _ip(s: Any) -> IPValue:
    if type(s) is IPValue:
        return s
    if type(s) is CIDRValue:
        return IPValue(s.iface.ip)
    if type(s) is not str:
        raise no_overload("ip", s)
    return IPValue(_parse_ip(s))


def _is_ip(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("isIP", s)
    try:
        _parse_ip(s)
    except CELError:
        return False
    return True


def _is_canonical(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("ip.isCanonical", s)
    return str(_parse_ip(s)) == s


def _parse_cidr(s: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    if "/" not in s:
        raise CELError(f"network address parse error during conversion from string: "
                       f"netip.ParsePrefix({s!r}): no '/'")
    addr, _, _ = s.partition("/")
    _parse_ip(addr)
    try:
        return ipaddress.ip_interface(s)
    except ValueError:
        raise CELError(f"network address parse error during conversion from string: "
                       f"netip.ParsePrefix({s!r}): bad bits") from None


def _cidr(s: Any) -> CIDRValue:
    if type(s) is not str:
        raise no_overload("cidr", s)
    return CIDRValue(_parse_cidr(s))


def _is_cidr(s: Any) -> bool:
    if type(s) is not str:
        raise no_overload("isCIDR", s)
    try:
        _parse_cidr(s)
    except CELError:
        return False
    return True


def _ipv(name: str, fn: Callable[[Any], Any]) -> Impl:
    def call(v: Any) -> Any:
        if type(v) is not IPValue:
            raise no_overload(name, v)
        return fn(v.addr)

    return call


def _contains_ip(c: Any, ip: Any) -> bool:
    if type(c) is not CIDRValue:
        raise no_overload("containsIP", c, ip)
    addr = _parse_ip(ip) if type(ip) is str else (ip.addr if type(ip) is IPValue else None)
    if addr is None:
        raise no_overload("containsIP", c, ip)
    return addr.version == c.iface.version and addr in c.iface.network


def _contains_cidr(c: Any, other: Any) -> bool:
    if type(c) is not CIDRValue:
        raise no_overload("containsCIDR", c, other)
    o = _parse_cidr(other) if type(other) is str else (
        other.iface if type(other) is CIDRValue else None)
    if o is None:
        raise no_overload("containsCIDR", c, other)
    return o.version == c.iface.version and o.network.subnet_of(c.iface.network)  # type: ignore[arg-type]


define("ip", ["ip(string) -> IP", "CIDR.ip() -> IP"], _ip, _cost_recv)
define("isIP", ["isIP(string) -> bool"], _is_ip, _cost_recv)
define("ip.isCanonical", ["ip.isCanonical(string) -> bool"], _is_canonical, _cost_recv)
define("family", ["IP.family() -> int"], _ipv("family", lambda a: a.version))
define("isUnspecified", ["IP.isUnspecified() -> bool"],
       _ipv("isUnspecified", lambda a: a.is_unspecified))
define("isLoopback", ["IP.isLoopback() -> bool"], _ipv("isLoopback", lambda a: a.is_loopback))
define("isLinkLocalMulticast", ["IP.isLinkLocalMulticast() -> bool"],
       _ipv("isLinkLocalMulticast", lambda a: a.is_multicast and (
           a in ipaddress.ip_network("224.0.0.0/24") if a.version == 4
           else (int(a) >> 112) & 0xFF0F == 0xFF02)))
define("isLinkLocalUnicast", ["IP.isLinkLocalUnicast() -> bool"],
       _ipv("isLinkLocalUnicast", lambda a: a.is_link_local and not a.is_multicast))
define("isGlobalUnicast", ["IP.isGlobalUnicast() -> bool"],
       _ipv("isGlobalUnicast", lambda a: not (
           a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local
           or (a.version == 4 and a == ipaddress.IPv4Address("255.255.255.255")))))
define("cidr", ["cidr(string) -> CIDR"], _cidr, _cost_recv)
define("isCIDR", ["isCIDR(string) -> bool"], _is_cidr, _cost_recv)
define("containsIP", ["CIDR.containsIP(IP) -> bool", "CIDR.containsIP(string) -> bool"],
       _contains_ip)
define("containsCIDR", ["CIDR.containsCIDR(CIDR) -> bool", "CIDR.containsCIDR(string) -> bool"],
       _contains_cidr)
define("masked", ["CIDR.masked() -> CIDR"],
       lambda c: CIDRValue(ipaddress.ip_interface(str(_want(c, CIDRValue, "masked", c)
                                                          .iface.network))))
define("prefixLength", ["CIDR.prefixLength() -> int"],
       lambda c: _want(c, CIDRValue, "prefixLength", c).iface.network.prefixlen)
