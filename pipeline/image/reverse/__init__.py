"""Reverse image search: where on the web a post's picture appears, behind one interface.

`base` defines the interface (`ReverseImageProvider`: picture in, pages out) and its records;
`serpapi` (Google Lens), `vision` (Google Cloud Vision web detection) and `tineye` implement it
over `pipeline.search.http.ProviderClient`, so they share web search's budgets, backoff,
timeouts and key redaction; `multi.ReverseSearch` caches, budgets and merges them; and
`trace.search_image_copies` is the check's step that turns their answers into cited, indexed and
hash-verified appearances for `pipeline.image.provenance`.
"""
