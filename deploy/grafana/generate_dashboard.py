#!/usr/bin/env python3
"""Writes deploy/grafana/dashboards/framegate.json, the dashboard Grafana
provisions, from the rows and panels listed below.

    deploy/grafana/generate_dashboard.py           rewrite the JSON
    deploy/grafana/generate_dashboard.py --check   exit 1 if the JSON is not what this writes

Why a generator: some fifty panels share one shape, so each is written here
as what differs (title, queries, unit, what to read from it) and the
layout is computed. The metric names are docs/METRICS.md's; the deploy
tests (tests/integration/deploy) check every query against that table.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dashboards", "framegate.json")
DATASOURCE = {"type": "prometheus", "uid": "framegate-prometheus"}  # provisioning/datasources/prometheus.yml
RANGE = "[$__rate_interval]"
GRID_WIDTH = 24


@dataclasses.dataclass
class Query:
    expr: str
    legend: str
    instant: bool = False


@dataclasses.dataclass
class Panel:
    title: str
    description: str
    queries: list[Query]
    unit: str = "short"
    kind: str = "timeseries"  # or "table" (instant queries, one row per series)
    width: int = 8
    height: int = 8


@dataclasses.dataclass
class Row:
    title: str
    panels: list[Panel]


# --- query builders -------------------------------------------------------


def rate(metric: str, by: str = "", legend: str = "") -> Query:
    """Per-second rate of a counter, summed (by the labels in `by`)."""
    grouping = f" by ({by})" if by else ""
    return Query(f"sum{grouping} (rate({metric}{RANGE}))", legend)


def total(metric: str, by: str = "", legend: str = "") -> Query:
    """A gauge summed across processes (by the labels in `by`)."""
    grouping = f" by ({by})" if by else ""
    return Query(f"sum{grouping} ({metric})", legend)


def quantiles(histogram: str, by: str = "", prefix: str = "", mean: bool = False) -> list[Query]:
    """p50 and p99 of a histogram (by the labels in `by`), and its mean if asked."""
    labels = f"le, {by}" if by else "le"
    suffix = "".join(f" {{{{{label.strip()}}}}}" for label in by.split(",")) if by else ""
    queries = [
        Query(f"histogram_quantile({q}, sum by ({labels}) (rate({histogram}_bucket{RANGE})))",
              f"{prefix}p{int(q * 100)}{suffix}")
        for q in (0.5, 0.99)
    ]
    if mean:
        grouping = f" by ({by})" if by else ""
        ratio = f"sum{grouping} (rate({histogram}_sum{RANGE})) / sum{grouping} (rate({histogram}_count{RANGE}))"
        queries.append(Query(ratio, f"{prefix}mean{suffix}"))
    return queries


def per_rate(numerator: str, denominator: str, legend: str) -> Query:
    """One counter's rate over another's, summed across processes."""
    return Query(f"sum (rate({numerator}{RANGE})) / sum (rate({denominator}{RANGE}))", legend)


def per_process(metric: str) -> Query:
    return Query(metric, "{{job}} {{instance}}")


# --- the dashboard ----------------------------------------------------------

GW = "framegate_gateway_"
WK = "framegate_worker_"
PROC = "framegate_process_"
HOST = '{host=~"$host"}'  # the dashboard's host variable (All: every host, and targets without the label)

# Selects framegate's rules (deploy/prometheus/alerts.yml) in ALERTS, the series
# Prometheus keeps for every pending or firing alert.
OURS = 'alertname=~"Framegate.+"'

ROWS = [
    Row("Alerts", [
        Panel("Alerts raised now", "framegate's alerts that Prometheus holds pending (the condition holds, not yet "
              "for the rule's whole `for`) or firing, one row per alert and process. docs/ALERTS.md says what each means "
              "and where to look; the rules are deploy/prometheus/alerts.yml. Empty is the healthy state.",
              [Query(f"max by (alertname, severity, alertstate, job, instance) (ALERTS{{{OURS}}})", "", instant=True)],
              kind="table", width=16, height=6),
        Panel("Alerts firing by severity", "How many framegate alerts fire, by severity, over the dashboard's time "
              "range: when a fault began and whether it is over.",
              [Query(f'count by (severity) (ALERTS{{{OURS}, alertstate="firing"}})', "{{severity}}")],
              width=8, height=6),
    ]),
    Row("Traffic", [
        Panel("Open connections", "WebSocket connections open now, per gateway. A step down is a gateway restart "
              "(its clients reconnect) or a client population leaving.",
              [total(f"{GW}connections_active", "instance", "{{instance}}")]),
        Panel("Connections opened and closed", "Handshakes accepted and connections ended per second. Closes "
              "steadily above opens drain the gateway; see the close codes below for why.",
              [rate(f"{GW}connections_opened_total", legend="opened"),
               rate(f"{GW}connections_closed_total", legend="closed")], "ops"),
        Panel("Handshakes refused by status", "HTTP errors answered instead of an upgrade: 503 is the "
              "connection limit or no worker, 404 a path no worker serves, 403 Origin, 408 too slow.",
              [rate(f"{GW}handshakes_refused_total", "status", "{{status}}")], "ops"),
        Panel("Clients named by balancers", "PROXY protocol headers from --proxy-protocol-from load balancers, "
              "by result: client (the connection counts as the client it names), local (the balancer's own, e.g. "
              "health checks), refused (400: a trusted address that sent none or a malformed one; a balancer "
              "without proxy_protocol on, or the list names more than the balancers). Then requests from "
              "--forwarded-for-from HTTP balancers, by what their header said: client, absent (no header: the "
              "balancer counts), unknown (a hop without an address: the nearest named one counts); a steady "
              "absent or unknown share means the balancer writes another header than the one read. Flat at 0 "
              "without the options.",
              [rate(f"{GW}proxy_headers_total", "result", "PROXY {{result}}"),
               rate(f"{GW}forwarded_for_total", "result", "forwarded {{result}}")], "ops"),
        Panel("Token refusals and expiries", "Handshakes refused with 401 by token verification, by reason "
              "(expired and bad_signature are the usual ones; unknown_key after a key rotation points at a missing "
              "SIGHUP), connections closed with 4001 when their token expired, and key reloads.",
              [rate(f"{GW}auth_refusals_total", "reason", "{{reason}}"),
               rate(f"{GW}auth_expired_closes_total", legend="expired closes (4001)"),
               rate(f"{GW}auth_key_reloads_total", "result", "reload {{result}}")], "ops"),
        Panel("Messages per second", "Whole messages from clients (in) and queued to clients (out, a broadcast "
              "once per recipient), by opcode. Out far above in is fan-out at work.",
              [rate(f"{GW}messages_received_total", "opcode", "in {{opcode}}"),
               rate(f"{GW}messages_sent_total", "opcode", "out {{opcode}}")], "ops"),
        Panel("Payload bytes per second", "Message payload in (after inflate) and out (before deflate), by opcode.",
              [rate(f"{GW}received_payload_bytes_total", "opcode", "in {{opcode}}"),
               rate(f"{GW}sent_payload_bytes_total", "opcode", "out {{opcode}}")], "Bps"),
        Panel("Socket bytes per second", "Bytes read from and written to client sockets (frames and handshakes, "
              "compressed where deflate is on): what the network carries.",
              [rate(f"{GW}socket_read_bytes_total", legend="read"),
               rate(f"{GW}socket_written_bytes_total", legend="written")], "Bps"),
        Panel("Received message size", "p50 and p99 of the size of client messages. A p99 close to "
              "--max-message-size means clients are about to be closed with 1009.",
              quantiles(f"{GW}message_size_bytes"), "bytes"),
        Panel("Batching", "Frames parsed per socket read (client side) and envelopes per write to a worker: "
              "above 1 under load, which is what keeps syscalls per message low.",
              quantiles(f"{GW}frames_per_read", prefix="frames/read ")
              + quantiles(f"{GW}link_envelopes_per_write", prefix="envelopes/write ")),
        Panel("Broadcast fan-out", "Recipients of one worker Send: the gateway frames it once for all of them.",
              quantiles(f"{GW}broadcast_recipients")),
        Panel("Client writes", "Messages per send to a client socket (above 1: a turn's messages to a client "
              "leave together), sends per system call (above 1: io_uring carries a turn's clients in batches of up "
              "to 16, --io-uring), and the share of broadcast write slices (250 µs, longer after a cut) that ran out "
              "of time with clients left for the next turn (near 1: fan-out keeps the thread writing; the loop still "
              "reads between slices).",
              [per_rate(f"{GW}messages_sent_total", f"{GW}socket_writes_total", "messages/write"),
               per_rate(f"{GW}socket_writes_total", f"{GW}socket_write_calls_total", "writes/system call"),
               per_rate(f"{GW}write_slices_cut_total", f"{GW}write_slices_total", "slices cut")]),
        Panel("Publish API by status", "POST /api/publish requests per second by HTTP status: 401 a wrong token, "
              "403 the API disabled (no --api-token), 503 no worker.",
              [rate(f"{GW}api_publishes_total", "status", "{{status}}")], "reqps"),
    ]),
    # The `host` label is a target label: deploy/multihost's file-based service
    # discovery gives every gateway and worker the host it runs on. Where no
    # target has it (docker-compose), this row shows one series without it.
    Row("Hosts", [
        Panel("Connections per host", "WebSocket connections open on each host's gateway. A host dropping to 0 "
              "while the others grow by as much: its clients reconnected elsewhere (a lost link or gateway).",
              [total(f"{GW}connections_active{HOST}", "host", "{{host}}")], width=6),
        Panel("Messages per host", "Client messages in and messages out to clients per second, by host: the "
              "load balancer's spread as the gateways see it.",
              [rate(f"{GW}messages_received_total{HOST}", "host", "in {{host}}"),
               rate(f"{GW}messages_sent_total{HOST}", "host", "out {{host}}")], "ops", width=6),
        Panel("Room traffic per host", "Room publishes the workers of each host made and room messages Redis "
              "delivered to them. A host delivering nothing while others publish has lost Redis.",
              [rate(f"{WK}broker_publishes_total{HOST}", "host", "published {{host}}"),
               rate(f"{WK}broker_deliveries_total{HOST}", "host", "delivered {{host}}")], "ops", width=6),
        Panel("Broker up per host", "The lowest broker_up among each host's workers: 0 means at least one "
              "worker there reaches only its local members.",
              [Query(f"min by (host) ({WK}broker_up{HOST})", "{{host}}")], width=6),
    ]),
    Row("Latency", [
        Panel("Gateway → worker → gateway", "From a message leaving for its worker to the worker's "
              "acknowledgement (its replies travel in the same write): the latency the workers add. A rising "
              "p99 with flat traffic is a slow app; see handler time in the Workers row.",
              quantiles(f"{GW}worker_roundtrip_seconds", mean=True), "s", width=12),
        Panel("Link ping round trip", "Health pings on the gateway-worker links: the floor under the round trip "
              "above. High while the app time is low means the worker's loop is blocked or the host is short "
              "of CPU.",
              quantiles(f"{GW}worker_link_rtt_seconds"), "s", width=12),
        Panel("Gateway time per event", "The gateway's own time for one socket event, from its read to the end "
              "of the writes it caused: client reads (with --echo, the whole echo) and worker link reads. "
              "Compare with the kernel wait beside it: a tail that is not here is not the gateway's code.",
              quantiles(f"{GW}client_turn_seconds", prefix="client ") +
              quantiles(f"{GW}link_turn_seconds", prefix="link "), "s", width=12),
        Panel("Kernel wait before a read", "How long client data waited in the kernel before the gateway read "
              "it (receive timestamp to read): the scheduler running something else, or the loop busy with "
              "other sockets. High here and low in the gateway time means too few cores or threads.",
              quantiles(f"{GW}receive_wait_seconds", mean=True), "s", width=12),
    ]),
    Row("Backpressure and errors", [
        Panel("Closes by code", "Connections ended per second by close code: 1000/1001 normal, 1006 TCP died, "
              "1002/1007/1009 protocol violations, 1008 send queue overflow, 1011 pong timeout or app error, "
              "1013 no worker left.",
              [rate(f"{GW}connections_closed_total", "code", "{{code}}")], "ops"),
        Panel("Protocol errors by kind", "Connections failed for a protocol violation, by named error "
              "(gateway/ws/protocol.hpp). A new kind appearing usually means a new, broken client.",
              [rate(f"{GW}protocol_errors_total", "kind", "{{kind}}")], "ops"),
        Panel("Send backlog", "Bytes waiting for slow clients, per gateway. Growth toward "
              "connections × --max-send-queue means clients cannot keep up with what is sent to them.",
              [total(f"{GW}send_queue_bytes", "instance", "{{instance}}")], "bytes"),
        Panel("Backpressure events", "A client's queue hit --max-send-queue: closed (1008), message or pong "
              "dropped, per --send-queue-policy. Client limits: sockets refused (429) by --handshake-rate or "
              "--max-connections-per-ip, messages past --message-rate / --byte-rate (per --rate-limit-policy). "
              "Accept back-offs: a thread stopped accepting for 100 ms because it was out of file descriptors.",
              [rate(f"{GW}backpressure_events_total", "action", "{{action}}"),
               rate(f"{GW}rate_limited_total", "what, action", "rate limit {{what}} {{action}}"),
               rate(f"{GW}connections_refused_per_ip_total", legend="refused per IP"),
               rate(f"{GW}accept_backoffs_total", legend="accept back-offs")], "ops"),
        Panel("Heartbeats", "Pings sent to silent clients and connections closed (1011) because nothing "
              "followed a ping: dead clients the TCP stack did not report.",
              [rate(f"{GW}pings_sent_total", legend="pings"),
               rate(f"{GW}pong_timeouts_total", legend="pong timeouts")], "ops"),
        Panel("App errors by path", "Exceptions that escaped an app (the connection is closed with 1011). "
              "Anything above zero is a bug in that app.",
              [rate(f"{WK}app_errors_total", "path", "{{path}}")], "ops"),
        Panel("Too big for the worker", "Client messages closed with 1009 because their worker's --max-envelope "
              "cannot carry them. Anything above zero: raise --max-envelope above --max-message-size.",
              [rate(f"{GW}messages_too_big_for_worker_total", legend="closed 1009")], "ops"),
        Panel("Held closes", "Closes held until the worker acknowledged what the client sent before them "
              "(`send(m); close()`, or a bad frame after good ones), and those released by --close-timeout "
              "instead: timeouts mean a stuck or slow worker.",
              [rate(f"{GW}held_closes_total", "reason", "held: {{reason}}"),
               rate(f"{GW}held_close_timeouts_total", "reason", "timed out: {{reason}}")], "ops"),
        Panel("Refused from workers", "Sends and closes a worker asked for that no client may receive (too big, "
              "invalid UTF-8, a close code no endpoint may send): that connection is closed with 1011, the "
              "link stays up. Anything above zero is a bug in an app.",
              [rate(f"{GW}worker_envelopes_rejected_total", "reason", "{{reason}}")], "ops"),
    ]),
    Row("Workers", [
        Panel("Workers registered", "Workers each gateway has links to. A dip is a worker stopped or crashed: "
              "its connections moved to the others (see failovers).",
              [total(f"{GW}workers", "instance", "{{instance}}")]),
        Panel("Connections per worker", "Client connections routed to each worker now. Uneven with the default "
              "--sticky-key conn means few connections; with ip/header keys, a few heavy keys.",
              [total(f"{GW}worker_connections", "worker", "{{worker}}")]),
        Panel("Links per worker", "Links up to each worker (the gateway's thread count when healthy, 0 once "
              "it is gone).",
              [total(f"{GW}worker_links", "worker", "{{worker}}")]),
        Panel("Worker links cut", "Links the gateway closed itself: a worker silent past --link-timeout "
              "(stopped, hung, or a handler blocking its loop) or not reading its link. Its connections "
              "failed over; see the worker's own logs.",
              [rate(f"{GW}worker_links_cut_total", "reason", "{{reason}}")], "ops"),
        Panel("Unacknowledged messages per worker", "Messages forwarded and not yet acknowledged: the credits "
              "in use. Pinned at --credit-window means the worker is saturated and its clients' reads are "
              "paused.",
              [total(f"{GW}worker_unacked_messages", "worker", "{{worker}}")]),
        Panel("Unacknowledged bytes per worker", "Payload bytes of those messages: the byte credits in use. "
              "Pinned at --credit-bytes means large messages saturate the worker. Held for replay: the memory "
              "the gateway keeps to replay them if the worker dies (the link blocks they sit in).",
              [total(f"{GW}worker_unacked_bytes", "worker", "{{worker}}"),
               total(f"{GW}worker_replay_held_bytes", "worker", "{{worker}} held for replay")], "bytes"),
        Panel("Credit pauses per worker", "Client reads paused because a worker's credits ran out. Sustained: "
              "that worker needs more CPU or more replicas (--scale worker=N).",
              [rate(f"{GW}worker_credit_pauses_total", "worker", "{{worker}}")], "ops"),
        Panel("Link writes that waited for room", "Writes over a worker link that its socket did not take "
              "whole, from the gateway and from the workers: the rest waited for the reader. Sustained under "
              "load: the link's send buffer (--link-sndbuf, capped by net.core.wmem_max) is too small for a "
              "turn's batch, or the reader is saturated.",
              [rate(f"{GW}link_write_waits_total", legend="gateway to workers"),
               rate(f"{WK}link_write_waits_total", legend="workers to gateway")], "ops"),
        Panel("Connections routed per worker", "Connections given to each worker, new or moved there.",
              [rate(f"{GW}worker_connections_routed_total", "worker", "{{worker}}")], "ops"),
        Panel("Failovers", "Connections moved after their worker died, unacknowledged messages replayed to the "
              "next worker, and resumed connections the workers received. Bursts during an upgrade are "
              "expected; at other times, a crashing worker.",
              [rate(f"{GW}failovers_total", legend="moved"),
               rate(f"{GW}messages_replayed_total", legend="replayed"),
               rate(f"{WK}connections_resumed_total", legend="resumed")], "ops"),
        Panel("Messages handled by path", "Client messages handled per second by each app.",
              [rate(f"{WK}messages_handled_total", "path", "{{path}}")], "ops"),
        Panel("Handler time by path", "How long an app's on_message took. It runs on the worker's single loop: "
              "a high p99 delays every connection of that worker.",
              quantiles(f"{WK}handler_seconds", "path"), "s"),
        Panel("Connections opened by path", "Connections announced to workers per second, by app path.",
              [rate(f"{WK}connections_opened_total", "path", "{{path}}")], "ops"),
        Panel("Worker processes", "Each worker's own view: connections it serves and its links to gateway "
              "threads that are up.",
              [Query(f"{WK}connections", "connections {{instance}}"),
               Query(f"{WK}gateway_links", "links {{instance}}")]),
        Panel("Sends to gateways", "Send envelopes the workers queued to gateways per second.",
              [rate(f"{WK}sends_total", "instance", "{{instance}}")], "ops"),
        Panel("Deferred turns and state updates", "Dispatch turns that ended at their per-connection "
              "budgets with messages still queued (a client sending in bursts: the others are still served), "
              "and StateUpdates (room membership deltas, one per connection per turn) sent to gateways.",
              [rate(f"{WK}turns_deferred_total", legend="turns deferred"),
               rate(f"{WK}state_updates_total", legend="state updates")], "ops"),
    ]),
    Row("Broker", [
        Panel("Broker up", "1 while a worker's broker can deliver across workers (redis: both connections "
              "ready). 0 on any worker: its rooms reach only its local members until it reconnects.",
              [Query(f"{WK}broker_up", "{{broker}} {{instance}}")]),
        Panel("Publishes and deliveries", "Room publishes made by the apps and room messages delivered to them, "
              "per second; and publishes held (a round trip) until their room's new subscription on the "
              "publishing worker was acknowledged, so that its own members get them.",
              [rate(f"{WK}broker_publishes_total", legend="published"),
               rate(f"{WK}broker_deliveries_total", legend="delivered"),
               rate(f"{WK}broker_held_publishes_total", legend="held for a new subscription")], "ops"),
        Panel("Publish round trip", "Redis PUBLISH, written to acknowledged. High: Redis is overloaded or far.",
              quantiles(f"{WK}broker_publish_seconds"), "s"),
        Panel("Outage losses", "Publishes buffered while Redis was unreachable, dropped (no other host got "
              "them), and sent after a reconnect before every subscriber was back. Any drop: raise "
              "--redis-buffer or shorten outages.",
              [rate(f"{WK}broker_buffered_total", legend="buffered"),
               rate(f"{WK}broker_dropped_total", legend="dropped"),
               rate(f"{WK}broker_missed_total", legend="missed")], "ops"),
        Panel("Gaps", "Numbered room messages that never arrived at a worker live (offsets it saw skipped): "
              "a subscription in transit while a slot moved or a primary failed over, a peer's outbox overflow. "
              "Members recover them with since; a steady rate means subscriptions keep moving. Refilled: "
              "published while a worker resubscribed, delivered from the room's history once it was back; "
              "held: live ones that arrived before that read's answer and waited behind it.",
              [rate(f"{WK}broker_gap_messages_total", legend="gap messages"),
               rate(f"{WK}broker_refilled_messages_total", legend="refilled"),
               rate(f"{WK}broker_refill_held_messages_total", legend="held behind a refill")], "ops"),
        Panel("Outbox", "Publishes waiting for Redis now, per worker: non-zero only during an outage.",
              [total(f"{WK}broker_outbox", "instance", "{{instance}}")]),
        Panel("Reconnects", "Broker connections re-established, rooms subscribed again after them, copies "
              "of a publish skipped as already delivered, and earlier connections a network failure left on "
              "Redis, removed (each one a partition Redis had not noticed).",
              [rate(f"{WK}broker_reconnects_total", legend="reconnects"),
               rate(f"{WK}broker_resubscribes_total", legend="resubscribes"),
               rate(f"{WK}broker_duplicates_total", legend="duplicates"),
               rate(f"{WK}broker_stale_connections_removed_total", legend="stale connections removed")], "ops"),
        Panel("Rejected from Redis", "Messages from Redis dropped before delivery, by reason: too_big (above "
              "the worker's or a gateway's limit), invalid_utf8, foreign (no framegate header), forged_seq (a seq "
              "its origin never published), bad_mac (--redis-secret-file). And foreign messages delivered "
              "(--redis-foreign deliver). Any: someone other than the cluster publishes into room channels.",
              [rate(f"{WK}broker_rejected_total", "reason", "{{reason}}"),
               rate(f"{WK}broker_foreign_total", legend="foreign delivered")], "ops"),
        Panel("History reads", "Joins that asked for their position (recover) or for what they missed (since), "
              "by outcome: recovered is what clients want; trimmed says --history-size or --history-ttl is too "
              "small for how long clients stay away; epoch_changed follows a Redis that lost its data; "
              "unavailable, a Redis outage.",
              [rate(f"{WK}history_requests_total", "outcome", "{{outcome}}"),
               rate(f"{WK}history_recovered_messages_total", legend="messages recovered")], "ops"),
        Panel("History length", "Messages kept in the history of the rooms each worker is subscribed to "
              "(min(top offset, --history-size) per room).",
              [total(f"{WK}history_messages", "instance", "{{instance}}")]),
        Panel("Presence", "Connections counted in room presence (every worker's share summed) and presence "
              "ops answered per second.",
              [total(f"{WK}presence_connections", legend="connections present"),
               rate(f"{WK}presence_reads_total", legend="presence reads")]),
        Panel("Redis Cluster", "With --redis-cluster: primaries each worker is connected to, slots without a "
              "primary in its slot map (above 0: the rooms of those slots wait for a shard), and per second the "
              "slot maps read, the redirections (MOVED, ASK, TRYAGAIN, CLUSTERDOWN: the map was out of date) and "
              "the room subscriptions moved to another shard (a slot migrated, a primary failed over).",
              [total(f"{WK}redis_cluster_shards", "instance", "shards {{instance}}"),
               total(f"{WK}redis_cluster_slots_unmapped", "instance", "slots unmapped {{instance}}"),
               rate(f"{WK}redis_cluster_map_refreshes_total", legend="maps read"),
               rate(f"{WK}redis_cluster_redirects_total", legend="redirects"),
               rate(f"{WK}redis_cluster_rooms_moved_total", legend="rooms moved")]),
        Panel("Rooms and subscriptions", "Rooms with members on a worker and broker channels subscribed, summed "
              "over workers.",
              [total(f"{WK}rooms", legend="rooms"),
               total(f"{WK}broker_subscriptions", legend="subscriptions")]),
    ]),
    Row("Deflate", [
        Panel("Deflate connections", "Connections that negotiated permessage-deflate (RFC 7692).",
              [total(f"{GW}deflate_connections", "instance", "{{instance}}")]),
        Panel("Compression ratio", "Bytes on the wire over bytes of payload, by direction: lower is better. "
              "Near 1: the payloads do not compress (binary, already compressed) and deflate only costs CPU.",
              [Query(f"sum by (direction) (rate({GW}deflate_compressed_bytes_total{RANGE})) / "
                     f"sum by (direction) (rate({GW}deflate_uncompressed_bytes_total{RANGE}))", "{{direction}}")],
              "percentunit"),
        Panel("Deflated messages", "Messages inflated (in) and compressed (out; a broadcast compressed once "
              "counts once), and messages sent uncompressed because they were below --deflate-threshold.",
              [rate(f"{GW}deflate_messages_total", "direction", "{{direction}}"),
               rate(f"{GW}deflate_skipped_total", legend="skipped")], "ops"),
        Panel("Compressed at the publisher", "Room messages compressed once by the worker that published them "
              "(--publish-deflate) and sent through Redis with it; the gateways' messages sent with that "
              "compression (none made there); and the deliveries that reached workers with one.",
              [rate(f"{WK}broker_deflated_publishes_total", legend="publishes compressed"),
               rate(f"{WK}broker_deflated_deliveries_total", legend="deliveries with it"),
               rate(f"{GW}deflate_publisher_messages_total", legend="gateway messages sent with it")], "ops"),
    ]),
    Row("Process resources", [
        Panel("CPU", "CPU time per second (1 = one core) of each gateway and worker.",
              [Query(f"rate({PROC}cpu_seconds_total{RANGE})", "{{job}} {{instance}}")]),
        Panel("Resident memory", "RSS of each process. A gateway grows with connections (about 1 KiB idle "
              "each) and send backlogs; steady growth at a flat connection count is a leak.",
              [per_process(f"{PROC}resident_memory_bytes")], "bytes"),
        Panel("Pooled memory freed", "Buffers (gateway) and payload strings (workers) kept for reuse that sat "
              "unused for a whole --pool-shed-period and were freed: after a burst, what lets RSS fall back.",
              [rate(f"{GW}pool_shed_bytes_total", legend="gateway"),
               rate(f"{WK}pool_shed_bytes_total", legend="workers")], "Bps"),
        Panel("Memory handed back", "Times a process gave freed memory back to the kernel (malloc_trim) "
              "once its pools shed, or connections that left freed, 1 MiB or more: at most once per 10 s "
              "each.",
              [rate(f"{GW}memory_trims_total", legend="gateway"),
               rate(f"{WK}memory_trims_total", legend="workers")], "ops"),
        Panel("File descriptors", "Open descriptors over the limit: the gateway needs one per connection; "
              "near 1 it refuses connections.",
              [Query(f"{PROC}open_fds / {PROC}max_fds", "{{job}} {{instance}}")], "percentunit"),
        Panel("Open file descriptors", "Descriptors open now.", [per_process(f"{PROC}open_fds")]),
        Panel("Uptime", "Time since each process started: a reset is a restart (crash or deploy).",
              [Query(f"time() - {PROC}start_time_seconds", "{{job}} {{instance}}")], "s"),
        Panel("Scrape targets", "Processes Prometheus found and scraped, by job: the gateways and workers "
              "running now.",
              [Query('sum by (job) (up{job=~"framegate-.*"})', "{{job}}")]),
        Panel("Versions", "Which version each component runs, and how many processes run it.",
              [Query("count by (component, version) (framegate_build_info)", "{{component}} {{version}}",
                     instant=True)], kind="table", width=24, height=6),
    ]),
]


# --- JSON --------------------------------------------------------------------


def target_json(query: Query, ref: str) -> dict:
    target = {"datasource": DATASOURCE, "refId": ref, "expr": query.expr, "legendFormat": query.legend}
    if query.instant:
        target.update({"instant": True, "range": False, "format": "table"})
    return target


def panel_json(panel: Panel, panel_id: int, x: int, y: int) -> dict:
    result = {
        "id": panel_id,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": panel.height, "w": panel.width, "x": x, "y": y},
        "targets": [target_json(q, chr(ord("A") + i)) for i, q in enumerate(panel.queries)],
        "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
    }
    if panel.kind == "timeseries":
        result["fieldConfig"]["defaults"]["custom"] = {"fillOpacity": 10, "showPoints": "never"}
        result["options"] = {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                             "tooltip": {"mode": "multi", "sort": "desc"}}
    else:
        result["options"] = {"showHeader": True}
        result["transformations"] = [{"id": "organize", "options": {"excludeByName": {"Time": True}}}]
    return result


HOST_VARIABLE = {
    "name": "host",
    "label": "Host",
    "type": "query",
    "datasource": DATASOURCE,
    "query": {"query": "label_values(framegate_gateway_connections_active, host)", "refId": "host"},
    "definition": "label_values(framegate_gateway_connections_active, host)",
    "refresh": 2,
    "multi": True,
    "includeAll": True,
    "allValue": ".*",
    "current": {"text": "All", "value": "$__all"},
    "sort": 1,
}


def dashboard_json() -> dict:
    panels = []
    y = 0
    for row in ROWS:
        panels.append({"id": len(panels) + 1, "type": "row", "title": row.title, "collapsed": False,
                       "gridPos": {"h": 1, "w": GRID_WIDTH, "x": 0, "y": y}, "panels": []})
        y += 1
        x = 0
        line_height = 0
        for panel in row.panels:
            if x + panel.width > GRID_WIDTH:
                x, y = 0, y + line_height
                line_height = 0
            panels.append(panel_json(panel, len(panels) + 1, x, y))
            x += panel.width
            line_height = max(line_height, panel.height)
        y += line_height
    return {
        "uid": "framegate",
        "title": "framegate",
        "description": "Gateways, workers and the broker of a framegate cluster (docs/DEPLOY.md explains each row).",
        "tags": ["framegate"],
        "editable": False,
        "graphTooltip": 1,
        "refresh": "10s",
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-30m", "to": "now"},
        "timezone": "browser",
        "templating": {"list": [HOST_VARIABLE]},
        "annotations": {"list": []},
        "links": [],
        "panels": panels,
    }


def render() -> str:
    return json.dumps(dashboard_json(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv[1:] == ["--check"]:
        with open(OUTPUT, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{OUTPUT} is not what {argv[0]} writes: run it without --check", file=sys.stderr)
                return 1
        return 0
    if argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    with open(OUTPUT, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
