-- wrk script: each request carries a typical hls.js CMCD query (CTA-5004), its values changing with every request
-- (buffer length, measured throughput), as a player sends them. Usage: wrk -s bench/tools/cmcd.lua URL
-- With `-- plain`, the same query is made and left out of the request target, sent instead in a field the server
-- ignores (`X-Pad`): the client's work and the request's bytes (which the client, the kernel and the server's reader
-- share on the same machine) are the same on both sides of a comparison, so that only what the server does with CMCD
-- differs.
local counter = 0
local plain = false

init = function(args)
    plain = args[1] == "plain"
end

local function encode(text)
    return (text:gsub("[^%w]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

request = function()
    counter = counter + 1
    local fields = string.format(
        'bl=%d,br=3200,d=4004,mtp=%d,nor="obj100k.ts",ot=v,sf=h,sid="6e2fb550-c457-11e9-bb97-0800200c9a66",st=v,tb=6000',
        1000 + counter % 29000, 20000 + (counter * 7919) % 50000)
    local query = "?CMCD=" .. encode(fields)
    if plain then
        return wrk.format(nil, wrk.path, { ["X-Pad"] = query })
    end
    return wrk.format(nil, wrk.path .. query)
end
