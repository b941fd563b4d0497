-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.

-- AssetRepository.listJson(account 1, "folder=images"), nothing known yet: the count, then page 1 [1 of 2]
select count(*) as "count"
from "assets"
where "assets"."account_id" = $1 and "assets"."folder" = $2;

-- AssetRepository.listJson(account 1, "folder=images"), nothing known yet: the count, then page 1 [2 of 2]
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = $1 and "assets"."folder" = $2
order by "assets"."id"
limit $3;

-- AssetRepository.listJson(account 1, "image=true&created_at.in=2026-01-01,2026-01-02&width.gte=100"), nothing known yet: the count, then page 1 [1 of 2]
select count(*) as "count"
from "assets"
where "assets"."account_id" = $1 and ("assets"."image" = $2 and (("assets"."created_at" >= $3 and "assets"."created_at" <= $4) or ("assets"."created_at" >= $5 and "assets"."created_at" <= $6)) and "assets"."width" >= $7);

-- AssetRepository.listJson(account 1, "image=true&created_at.in=2026-01-01,2026-01-02&width.gte=100"), nothing known yet: the count, then page 1 [2 of 2]
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = $1 and ("assets"."image" = $2 and (("assets"."created_at" >= $3 and "assets"."created_at" <= $4) or ("assets"."created_at" >= $5 and "assets"."created_at" <= $6)) and "assets"."width" >= $7)
order by "assets"."id"
limit $8;

-- AssetRepository.listJson(account 1, "page=2"), nothing known yet: the count, then page 2 by offset [1 of 2]
select count(*) as "count"
from "assets"
where "assets"."account_id" = $1;

-- AssetRepository.listJson(account 1, "page=2"), nothing known yet: the count, then page 2 by offset [2 of 2]
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = $1
order by "assets"."id"
limit $2
offset $3;

-- AssetRepository.listJson(account 1, "folder=images&page=3"), the count and where page 3 starts known: page 3 from its first id
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = $1 and "assets"."folder" = $2 and "assets"."id" >= $3
order by "assets"."id"
limit $4;

-- AssetRepository.listJson(account 1, "folder=images&page=5"), the count and where page 3 starts known: page 5 from there by offset
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = $1 and "assets"."folder" = $2 and "assets"."id" >= $3
order by "assets"."id"
limit $4
offset $5;

-- AssetRepository.find(1, 42)
select *
from "assets"
where "account_id" = $1 and "id" = $2;

-- AssetRepository.findPublic("k3x9", "p-3f2a")
select "assets".*
from "assets"
inner join "accounts" on "accounts"."id" = "assets"."account_id"
where "accounts"."handle" = $1 and "assets"."public_id" = $2;

-- AssetRepository.handleOf(1)
select "handle"
from "accounts"
where "id" = $1;

-- AssetRepository.insert(a local image "images/logo.png")
insert into "assets" ("account_id", "created_at", "updated_at", "name", "folder", "image", "video", "script", "style", "text", "width", "height", "url", "async", "defer", "blob_key", "size", "content_type", "etag", "public_id", "entry_json")
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
returning "id";

-- AssetRepository.update(a local image, { name: "logo-2.png", folder: "brand", updated_at }), renamed and moved, its bytes unchanged
update "assets"
set "name" = $1, "folder" = $2, "updated_at" = $3, "entry_json" = $4
where "account_id" = $5 and "id" = $6 and "blob_key" = $7 and "entry_json" = $8;

-- AssetRepository.update(a remote image, { width: 240, height: 80, updated_at }), an asset without bytes
update "assets"
set "width" = $1, "height" = $2, "updated_at" = $3, "entry_json" = $4
where "account_id" = $5 and "id" = $6 and "blob_key" is null and "entry_json" = $7;

-- AssetRepository.delete(1, 42)
delete from "assets"
where "account_id" = $1 and "id" = $2
returning "blob_key";

-- AssetRepository.folderExists(1, "images/2026")
select "id"
from "assets"
where "account_id" = $1 and ("folder" = $2 or ("folder" >= $3 and "folder" < $4))
limit $5;

-- AssetRepository.journalBlob("blobs/3f/3f2a", 1767225600)
insert into "blob_journal" ("blob_key", "created_at")
values ($1, $2)
on conflict do nothing;

-- AssetRepository.forgetBlob("blobs/3f/3f2a")
delete from "blob_journal"
where "blob_key" = $1;

-- AssetRepository.claimOrphan("blobs/3f/3f2a")
delete from "blob_journal"
where "blob_key" = $1 and not exists (select "assets"."id" from "assets" where "assets"."blob_key" = "blob_journal"."blob_key");

-- AssetRepository.orphanedBlobs(1767222000)
select "blob_key"
from "blob_journal"
where "created_at" < $1 and not exists (select "assets"."id" from "assets" where "assets"."blob_key" = "blob_journal"."blob_key");
