# Varnish 7 in front of the HLS origin, as its users configure it for HLS: segments kept a day, playlists a
# second with a short grace, request coalescing (Varnish's default), streaming while fetching (do_stream).
# bench/run.sh starts varnishd with -b-less -f this file; it substitutes __ORIGIN_HOST__ and __ORIGIN_PORT__.
vcl 4.1;

backend origin {
    .host = "__ORIGIN_HOST__";
    .port = "__ORIGIN_PORT__";
}

sub vcl_recv {
    # Cache regardless of cookies and authorization headers the players do not send here.
    unset req.http.Cookie;
    return (hash);
}

sub vcl_backend_response {
    if (bereq.url ~ "\.m3u8(\?.*)?$") {
        set beresp.ttl = 1s;
        set beresp.grace = 2s;
    } else {
        set beresp.ttl = 1d;
        set beresp.grace = 1h;
    }
    set beresp.do_stream = true;
    return (deliver);
}
