-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.

-- CartRepository.connect({"account_id":1,"cart":"clickbank","token_hash":"sha256 of the token, hex","token_prefix":"Xq3kP0","secret":"CBSECRET","created_at":1767225600}), connected, or connected again
insert into "cart_receivers" ("account_id", "cart", "token_hash", "token_prefix", "secret", "created_at")
values ($1, $2, $3, $4, $5, $6)
on conflict ("account_id", "cart") do update
set "token_hash" = $7, "token_prefix" = $8, "secret" = $9, "created_at" = $10;

-- CartRepository.receivers(1)
select "cart", "token_prefix", "created_at"
from "cart_receivers"
where "account_id" = $1
order by "cart";

-- CartRepository.disconnect(1, "clickbank")
delete from "cart_receivers"
where "account_id" = $1 and "cart" = $2;

-- CartRepository.findByTokenHash("sha256 of the token, hex")
select *
from "cart_receivers"
where "token_hash" = $1;

-- CartRepository.connectedTokenHashes(the hashes of two tokens)
select "token_hash"
from "cart_receivers"
where "token_hash" in ($1, $2);

-- CartRepository.keptEventKeys(the keys of two Digistore24 refunds)
select "account_id", "cart", "event_key"
from "cart_events"
where ("account_id", "cart", "event_key") in (($1, $2, $3), ($4, $5, $6));

-- CartRepository.insertEvents(two Digistore24 refunds)
insert into "cart_events" ("account_id", "received_at", "occurred_at", "cart", "event_key", "event", "cart_event", "receipt", "original_receipt", "test", "status", "problem", "conversion_id", "payload")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14),
       ($15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)
on conflict ("account_id", "cart", "event_key") do nothing;

-- CartRepository.listEvents(account 1, "event=refund&received_at.gte=2026-01-01"), nothing known yet: the count, then page 1 [1 of 2]
select count(*) as "count"
from "cart_events"
where "cart_events"."account_id" = $1 and ("cart_events"."event" = $2 and "cart_events"."received_at" >= $3);

-- CartRepository.listEvents(account 1, "event=refund&received_at.gte=2026-01-01"), nothing known yet: the count, then page 1 [2 of 2]
select "cart_events".*
from "cart_events"
where "cart_events"."account_id" = $1 and ("cart_events"."event" = $2 and "cart_events"."received_at" >= $3)
order by "cart_events"."id"
limit $4;
