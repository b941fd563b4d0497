-- Written by `npm run sql:update` (test/sql/snapshots.ts); test/sql/snapshots.test.ts fails when the code sends other SQL.

-- AssetRepository.listJson(account 1, "folder=images"), nothing known yet: the count, then page 1 [1 of 2]
select count(*) as "count"
from "assets"
where "assets"."account_id" = ? and "assets"."folder" = ?;

-- AssetRepository.listJson(account 1, "folder=images"), nothing known yet: the count, then page 1 [2 of 2]
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = ? and "assets"."folder" = ?
order by "assets"."id"
limit ?;

-- AssetRepository.listJson(account 1, "image=true&created_at.in=2026-01-01,2026-01-02&width.gte=100"), nothing known yet: the count, then page 1 [1 of 2]
select count(*) as "count"
from "assets"
where "assets"."account_id" = ? and ("assets"."image" = ? and (("assets"."created_at" >= ? and "assets"."created_at" <= ?) or ("assets"."created_at" >= ? and "assets"."created_at" <= ?)) and "assets"."width" >= ?);

-- AssetRepository.listJson(account 1, "image=true&created_at.in=2026-01-01,2026-01-02&width.gte=100"), nothing known yet: the count, then page 1 [2 of 2]
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = ? and ("assets"."image" = ? and (("assets"."created_at" >= ? and "assets"."created_at" <= ?) or ("assets"."created_at" >= ? and "assets"."created_at" <= ?)) and "assets"."width" >= ?)
order by "assets"."id"
limit ?;

-- AssetRepository.listJson(account 1, "page=2"), nothing known yet: the count, then page 2 by offset [1 of 2]
select count(*) as "count"
from "assets"
where "assets"."account_id" = ?;

-- AssetRepository.listJson(account 1, "page=2"), nothing known yet: the count, then page 2 by offset [2 of 2]
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = ?
order by "assets"."id"
limit ?
offset ?;

-- AssetRepository.listJson(account 1, "folder=images&page=3"), the count and where page 3 starts known: page 3 from its first id
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = ? and "assets"."folder" = ? and "assets"."id" >= ?
order by "assets"."id"
limit ?;

-- AssetRepository.listJson(account 1, "folder=images&page=5"), the count and where page 3 starts known: page 5 from there by offset
select "assets"."id", "assets"."blob_key", "assets"."public_id", "assets"."entry_json"
from "assets"
where "assets"."account_id" = ? and "assets"."folder" = ? and "assets"."id" >= ?
order by "assets"."id"
limit ?
offset ?;

-- AssetRepository.find(1, 42)
select *
from "assets"
where "account_id" = ? and "id" = ?;

-- AssetRepository.findPublic("k3x9", "p-3f2a")
select "assets".*
from "assets"
inner join "accounts" on "accounts"."id" = "assets"."account_id"
where "accounts"."handle" = ? and "assets"."public_id" = ?;

-- AssetRepository.handleOf(1)
select "handle"
from "accounts"
where "id" = ?;

-- AssetRepository.insert(a local image "images/logo.png")
insert into "assets" ("account_id", "created_at", "updated_at", "name", "folder", "image", "video", "script", "style", "text", "width", "height", "url", "async", "defer", "blob_key", "size", "content_type", "etag", "public_id", "entry_json")
values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
returning "id";

-- AssetRepository.update(a local image, { name: "logo-2.png", folder: "brand", updated_at }), renamed and moved, its bytes unchanged
update "assets"
set "name" = ?, "folder" = ?, "updated_at" = ?, "entry_json" = ?
where "account_id" = ? and "id" = ? and "blob_key" = ? and "entry_json" = ?;

-- AssetRepository.update(a remote image, { width: 240, height: 80, updated_at }), an asset without bytes
update "assets"
set "width" = ?, "height" = ?, "updated_at" = ?, "entry_json" = ?
where "account_id" = ? and "id" = ? and "blob_key" is null and "entry_json" = ?;

-- AssetRepository.delete(1, 42)
delete from "assets"
where "account_id" = ? and "id" = ?
returning "blob_key";

-- AssetRepository.folderExists(1, "images/2026")
select "id"
from "assets"
where "account_id" = ? and ("folder" = ? or ("folder" >= ? and "folder" < ?))
limit ?;

-- AssetRepository.journalBlob("blobs/3f/3f2a", 1767225600)
insert into "blob_journal" ("blob_key", "created_at")
values (?, ?)
on conflict do nothing;

-- AssetRepository.forgetBlob("blobs/3f/3f2a")
delete from "blob_journal"
where "blob_key" = ?;

-- AssetRepository.claimOrphan("blobs/3f/3f2a")
delete from "blob_journal"
where "blob_key" = ? and not exists (select "assets"."id" from "assets" where "assets"."blob_key" = "blob_journal"."blob_key");

-- AssetRepository.orphanedBlobs(1767222000)
select "blob_key"
from "blob_journal"
where "created_at" < ? and not exists (select "assets"."id" from "assets" where "assets"."blob_key" = "blob_journal"."blob_key");
