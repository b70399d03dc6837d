#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A minimal consumer of the tool's Kafka topic.

Reads each message, checks it against the published schema
(docs/record.schema.json) and writes the valid ones as JSON Lines on
stdout, one message per line, as the tool wrote them. Messages that do not
match the schema, or are not JSON, are counted and named on stderr; the
exit status is 1 if there was any. A streaming consumer: it holds one
message at a time, never the topic.

Needs confluent-kafka (librdkafka's Python binding; Debian:
python3-confluent-kafka) and jsonschema (python3-jsonschema).

    consume.py --brokers broker:9092 --topic lustre-ops \\
        --schema /usr/share/doc/lustre-ebpf-stream/docs/record.schema.json |
      jq -c 'select(.type == "access" and .latency_ns > 20e6)'

--group makes it one member of a consumer group (the partitions shared
among members; each job's records stay in one partition, in order, when
the key is the job id); --from-beginning reads what is already there;
--until-end stops at the end of every partition instead of waiting.
"""
import argparse
import json
import sys

from confluent_kafka import Consumer, KafkaError, TopicPartition
import jsonschema


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--brokers", required=True, help="bootstrap brokers, host:port[,...]")
    p.add_argument("--topic", required=True)
    p.add_argument("--schema", required=True, help="docs/record.schema.json")
    p.add_argument("--group", default="lustre-ebpf-stream-consume",
                   help="consumer group id (default: %(default)s)")
    p.add_argument("--from-beginning", action="store_true",
                   help="start at the oldest message, not only new ones")
    p.add_argument("--until-end", action="store_true",
                   help="stop once every partition is read to its end")
    p.add_argument("--with-key", action="store_true",
                   help="write KEY<TAB>LINE (the key is the job id by default)")
    return p.parse_args()


def open_consumer(args):
    consumer = Consumer({
        "bootstrap.servers": args.brokers,
        "group.id": args.group,
        "auto.offset.reset": "earliest" if args.from_beginning else "latest",
        "enable.partition.eof": args.until_end,
        # A one-off reader does not move the group's offsets.
        "enable.auto.commit": not args.until_end,
    })
    consumer.subscribe([args.topic])
    return consumer


def partitions_of(consumer, topic):
    meta = consumer.list_topics(topic, timeout=30)
    t = meta.topics.get(topic)
    if t is None or t.error is not None:
        raise SystemExit(f"consume.py: topic {topic}: {t.error if t else 'not found'}")
    return set(t.partitions)


def main():
    args = parse_args()
    with open(args.schema, encoding="utf-8") as f:
        validator = jsonschema.Draft7Validator(json.load(f))
    consumer = open_consumer(args)
    pending = partitions_of(consumer, args.topic) if args.until_end else None
    good = bad = 0
    try:
        while pending is None or pending:
            msg = consumer.poll(1.0)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    pending.discard(msg.partition())
                    continue
                raise SystemExit(f"consume.py: {msg.error()}")
            line = msg.value().decode("utf-8", errors="replace")
            try:
                validator.validate(json.loads(line))
            except (ValueError, jsonschema.ValidationError) as e:
                bad += 1
                where = f"partition {msg.partition()} offset {msg.offset()}"
                print(f"consume.py: {where}: not a record of the schema: "
                      f"{str(e).splitlines()[0]}", file=sys.stderr)
                continue
            good += 1
            if args.with_key:
                key = msg.key().decode("utf-8", errors="replace") if msg.key() else ""
                sys.stdout.write(key + "\t")
            sys.stdout.write(line + "\n")
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()
    print(f"consume.py: {good} records, {bad} not of the schema", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
