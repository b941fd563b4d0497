-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.

-- AccountRepository.findByName("default")
select *
from "accounts"
where "name" = $1;

-- AccountRepository.ensure("default", "k3x9", 1767225600), the account not there yet [1 of 3]
select *
from "accounts"
where "name" = $1;

-- AccountRepository.ensure("default", "k3x9", 1767225600), the account not there yet [2 of 3]
insert into "accounts" ("name", "handle", "created_at")
values ($1, $2, $3)
on conflict ("name") do nothing;

-- AccountRepository.ensure("default", "k3x9", 1767225600), the account not there yet [3 of 3]
select *
from "accounts"
where "name" = $1;

-- AccountRepository.addKey(1, "acds_k3x9", "sha256 of the key, hex", 1767225600), the key not there yet [1 of 2]
select "id", "prefix"
from "api_keys"
where "key_hash" = $1;

-- AccountRepository.addKey(1, "acds_k3x9", "sha256 of the key, hex", 1767225600), the key not there yet [2 of 2]
insert into "api_keys" ("account_id", "prefix", "key_hash", "created_at", "revoked_at")
values ($1, $2, $3, $4, $5)
on conflict ("key_hash") do nothing;

-- AccountRepository.addKey(1, "Tr0u", "sha256 of the key, hex", 1767225600), the key there already [1 of 2]
select "id", "prefix"
from "api_keys"
where "key_hash" = $1;

-- AccountRepository.addKey(1, "Tr0u", "sha256 of the key, hex", 1767225600), the key there already [2 of 2]
update "api_keys"
set "prefix" = $1
where "id" = $2;

-- AccountRepository.accountForKey("sha256 of the key, hex")
select "api_keys"."account_id", "accounts"."data_version" + coalesce("conversion_versions"."version", 0) as "data_version", coalesce("conversion_versions"."newest_id", 0) as "newest_conversion_id"
from "api_keys"
inner join "accounts" on "accounts"."id" = "api_keys"."account_id"
left join "conversion_versions" on "conversion_versions"."account_id" = "api_keys"."account_id"
where "api_keys"."key_hash" = $1 and "api_keys"."revoked_at" is null;

-- AccountRepository.bumpDataVersion(1)
update "accounts"
set "data_version" = "data_version" + $1
where "id" = $2;

-- AccountRepository.exists(1)
select "id"
from "accounts"
where "id" = $1;

-- AccountRepository.removeIfEmpty(1)
delete from "accounts"
where "id" = $1 and not (exists (select "id" from "api_keys" where "account_id" = $2) or exists (select "id" from "assets" where "account_id" = $3) or exists (select "id" from "conversions" where "account_id" = $4));

-- AccountRepository.listKeys(1)
select *
from "api_keys"
where "account_id" = $1
order by "id";

-- AccountRepository.keysWithPrefix("acds_k3x9")
select *
from "api_keys"
where "prefix" = $1;

-- AccountRepository.revokeKey(7, 1767225600)
update "api_keys"
set "revoked_at" = $1
where "id" = $2 and "revoked_at" is null;
