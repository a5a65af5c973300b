-- edgefabric.lua: Wireshark dissector for edgefabric's own wire formats.
--
--   * Axon packets (thesis §3.1.1): type, length, hop counts, forward and
--     reverse paths (4-bit or 8-bit hops), probe options and the timestamp
--     records probe units append to the tail.
--   * DumbNet tag stacks after EtherType 0x9800 (DumbNet §5.1).
--   * edgefabric control messages after EtherType 0x88B5: SPAIN chirps,
--     Axon hello/Axon-ARP/ether probes, DumbNet probes, switch IDs, port
--     and host notifications, topology patches, path-graph queries and
--     replies, overlay vport/vnet records, backplane next hops. The same
--     messages are dissected inside Axon control packets.
--   * Captures with link type USER0 (147) written by wire.PcapWriter with
--     LinkTypeEdgefabric: each record starts with one byte, 1 = Ethernet
--     frame, 2 = Axon packet.
--
-- Use:  wireshark -X lua_script:contrib/wireshark/edgefabric.lua capture.pcap
--       tshark    -X lua_script:contrib/wireshark/edgefabric.lua -r capture.pcap
-- or copy this file to ~/.local/lib/wireshark/plugins/. The formats are
-- described in docs/wire.md; the Go side is package wire, and
-- wire/tshark_test.go checks this file against the golden vectors.

local eth_dissector = Dissector.get("eth_withoutfcs")
local ethertype_table = DissectorTable.get("ethertype")
local data_dissector = Dissector.get("data")

-- A sub-dissector that runs out of bytes raises an error; report it as a
-- malformed-packet expert item on our tree instead of a Lua error.
local function call_sub(fn, item, expert_field)
  local ok, err = pcall(fn)
  if not ok then
    item:add_proto_expert_info(expert_field, "payload:" .. (tostring(err):match("[^:]*$") or ""))
  end
  return ok
end

local function call_eth(payload, pinfo, tree, item, expert_field)
  call_sub(function() eth_dissector:call(payload, pinfo, tree) end, item, expert_field)
end

-- The length of the MAC client data (what follows the Ethernet header, its
-- VLAN tags and EtherType) of the frame carrying a message, while the
-- DumbNet dissector hands on the payload after its tag stack; nil: the
-- message starts the client data. Padding depends on it alone: a frame is
-- padded to 46 bytes of client data, tagged or not (60 bytes untagged, 64
-- with a tag a bridge added after padding; wire.UntaggedLen).
local client_len = nil

------------------------------------------------------------------------
-- Control messages (EtherType 0x88B5, one-byte subtype)

local msg = Proto("edgefabric", "edgefabric control message")

local SUBTYPES = {
  [0x01] = "SPAIN chirp",
  [0x10] = "Axon hello", [0x11] = "Axon-ARP request", [0x12] = "Axon-ARP reply",
  [0x13] = "Axon ether probe",
  [0x20] = "DumbNet probe", [0x21] = "DumbNet probe reply", [0x22] = "DumbNet switch ID",
  [0x23] = "DumbNet port status", [0x24] = "DumbNet host notify",
  [0x25] = "DumbNet topology patch", [0x26] = "DumbNet path-graph query",
  [0x27] = "DumbNet path-graph reply", [0x28] = "DumbNet flood neighbours",
  [0x30] = "Overlay vport", [0x31] = "Overlay vnet",
  [0x40] = "Backplane next hop",
}
local STATES = { [1] = "up", [2] = "down" }
local OPS = { [1] = "add", [2] = "delete" }
local PHASES = { [1] = "learn", [2] = "measure" }
local KINDS = { [1] = "ingress", [2] = "egress" }
local DIRS = { [1] = "in", [2] = "out" }

local F = {}
local function add(list, abbr, pf) F[abbr] = pf; list[#list + 1] = pf; return pf end
local mf = {}
local function u8(a, n, vs) return add(mf, a, ProtoField.uint8(a, n, base.DEC, vs)) end
local function u16(a, n) return add(mf, a, ProtoField.uint16(a, n, base.DEC)) end
local function u24(a, n) return add(mf, a, ProtoField.uint24(a, n, base.DEC)) end
local function u32(a, n) return add(mf, a, ProtoField.uint32(a, n, base.DEC)) end
local function u64(a, n) return add(mf, a, ProtoField.uint64(a, n, base.DEC)) end
local function i64(a, n) return add(mf, a, ProtoField.int64(a, n, base.DEC)) end
local function mac(a, n) return add(mf, a, ProtoField.ether(a, n)) end
local function bool(a, n) return add(mf, a, ProtoField.bool(a, n)) end
local function ip(a, n)
  add(mf, a .. "_ipv4", ProtoField.ipv4(a .. "_ipv4", n))
  add(mf, a .. "_ipv6", ProtoField.ipv6(a .. "_ipv6", n))
  return a
end

add(mf, "edgefabric.subtype", ProtoField.uint8("edgefabric.subtype", "Subtype", base.HEX, SUBTYPES))
u8("edgefabric.path_len", "Path length")
u8("edgefabric.path_tag", "Path tag")
u16("edgefabric.link_count", "Link count")
u64("edgefabric.link.a", "Switch A")
u16("edgefabric.link.a_port", "Port A")
u64("edgefabric.link.b", "Switch B")
u16("edgefabric.link.b_port", "Port B")
u8("edgefabric.link.flags", "Flags (1 up, 2 primary, 4 backup, 8 detour)")
u8("edgefabric.dnnbr.count", "Neighbour count")
add(mf, "edgefabric.padding", ProtoField.bytes("edgefabric.padding", "Padding (Ethernet minimum frame)"))
mac("edgefabric.dnnbr.mac", "Neighbour MAC")

-- Each message is a list of steps: {kind, abbr} read in order.
local LAYOUT = {
  [0x01] = { {"flags1", "edgefabric.chirp.want_reply"}, {"ip", ip("edgefabric.chirp", "IP")},
             {"mac", mac("edgefabric.chirp.mac", "MAC")}, {"u64", u64("edgefabric.chirp.edge_switch", "Edge switch")} },
  [0x10] = { {"u64", u64("edgefabric.hello.axon_id", "Axon ID")}, {"u16", u16("edgefabric.hello.port", "Port")},
             {"helloflags"} },
  [0x11] = "aarp", [0x12] = "aarp",
  [0x13] = { {"u64", u64("edgefabric.eprobe.axon_id", "Axon ID")}, {"u16", u16("edgefabric.eprobe.src_port", "Source port")},
             {"u16", u16("edgefabric.eprobe.dst_port", "Destination port")}, {"u32", u32("edgefabric.eprobe.seq", "Seq")},
             {"enum", u8("edgefabric.eprobe.phase", "Phase", PHASES), PHASES}, {"i64", i64("edgefabric.eprobe.sent_at", "Sent at (ps)")} },
  [0x20] = { {"u32", u32("edgefabric.dnprobe.seq", "Seq")}, {"mac", mac("edgefabric.dnprobe.src_mac", "Source MAC")},
             {"ip", ip("edgefabric.dnprobe.src", "Source IP")}, {"path"} },
  [0x21] = { {"u32", u32("edgefabric.dnreply.seq", "Seq")}, {"mac", mac("edgefabric.dnreply.host_mac", "Host MAC")},
             {"ip", ip("edgefabric.dnreply.host", "Host IP")}, {"mac", mac("edgefabric.dnreply.controller", "Controller MAC")},
             {"path"} },
  [0x22] = { {"u64", u64("edgefabric.dnswid.switch_id", "Switch ID")},
             {"echo", add(mf, "edgefabric.dnswid.echo", ProtoField.bytes("edgefabric.dnswid.echo", "Echoed query", base.COLON))} },
  [0x23] = { {"u64", u64("edgefabric.dnport.switch_id", "Switch ID")}, {"u16", u16("edgefabric.dnport.port", "Port")},
             {"enum", u8("edgefabric.dnport.state", "State", STATES), STATES}, {"u8", u8("edgefabric.dnport.hop_limit", "Hop limit")},
             {"u32", u32("edgefabric.dnport.seq", "Seq")} },
  [0x24] = { {"mac", mac("edgefabric.dnnotify.origin", "Origin")}, {"u32", u32("edgefabric.dnnotify.seq", "Seq")},
             {"u64", u64("edgefabric.dnnotify.switch_id", "Switch ID")}, {"u16", u16("edgefabric.dnnotify.port", "Port")},
             {"enum", u8("edgefabric.dnnotify.state", "State", STATES), STATES},
             {"u32", u32("edgefabric.dnnotify.switch_seq", "Switch seq (the port status's; 0: unknown)")} },
  [0x25] = { {"u64", u64("edgefabric.dnpatch.version", "Topology version")}, {"links"} },
  [0x26] = { {"u32", u32("edgefabric.dnquery.id", "Query ID")}, {"mac", mac("edgefabric.dnquery.src", "Source MAC")},
             {"mac", mac("edgefabric.dnquery.dst", "Destination MAC")}, {"ip", ip("edgefabric.dnquery.dst", "Destination IP")} },
  [0x27] = { {"u32", u32("edgefabric.dnpath.id", "Query ID")}, {"u64", u64("edgefabric.dnpath.version", "Topology version")},
             {"mac", mac("edgefabric.dnpath.src", "Source MAC")}, {"mac", mac("edgefabric.dnpath.dst", "Destination MAC")},
             {"u64", u64("edgefabric.dnpath.src_switch", "Source switch")}, {"u16", u16("edgefabric.dnpath.src_port", "Source port")},
             {"u64", u64("edgefabric.dnpath.dst_switch", "Destination switch")}, {"u16", u16("edgefabric.dnpath.dst_port", "Destination port")},
             {"links"} },
  [0x28] = { {"u64", u64("edgefabric.dnnbr.version", "Topology version")}, {"neighbors"} },
  [0x30] = { {"enum", u8("edgefabric.vport.op", "Op", OPS), OPS}, {"u64", u64("edgefabric.vport.switch", "Switch")},
             {"mac", mac("edgefabric.vport.mac", "MAC")}, {"u24", u24("edgefabric.vport.vni", "VNI")},
             {"u16", u16("edgefabric.vport.port", "Port")}, {"ip", ip("edgefabric.vport", "IP")} },
  [0x31] = { {"enum", u8("edgefabric.vnet.op", "Op", OPS), OPS}, {"u24", u24("edgefabric.vnet.vni", "VNI")},
             {"vlan", u16("edgefabric.vnet.vlan", "VLAN")},
             {"name", add(mf, "edgefabric.vnet.name", ProtoField.string("edgefabric.vnet.name", "Name"))} },
  [0x40] = { {"enum", u8("edgefabric.nexthop.kind", "Kind", KINDS), KINDS}, {"prefix"},
             {"vlan", u16("edgefabric.nexthop.vlan", "VLAN")}, {"mac", mac("edgefabric.nexthop.mac", "MAC")},
             {"u16", u16("edgefabric.nexthop.port", "Port")} },
}
local AARP = { {"u32", u32("edgefabric.aarp.seq", "Seq")}, {"mac", mac("edgefabric.aarp.real_mac", "Real MAC")},
               {"mac", mac("edgefabric.aarp.route_mac", "Route-memory MAC")}, {"ip", ip("edgefabric.aarp.src", "Source host IP")},
               {"ip", ip("edgefabric.aarp.tgt", "Target host IP")}, {"u16", u16("edgefabric.aarp.src_port", "Source host port")},
               {"u16", u16("edgefabric.aarp.tgt_port", "Target host port")} }
LAYOUT[0x11], LAYOUT[0x12] = AARP, AARP
bool("edgefabric.chirp.want_reply", "Want reply")
bool("edgefabric.hello.reply", "Reply")
bool("edgefabric.hello.wide", "8-bit hops")
ip("edgefabric.nexthop.prefix", "Prefix")
u8("edgefabric.nexthop.prefix_len", "Prefix length")
msg.fields = mf

local ef_malformed = ProtoExpert.new("edgefabric.malformed", "Malformed edgefabric message", expert.group.MALFORMED, expert.severity.ERROR)
msg.experts = { ef_malformed }

local SIZES = { u8 = 1, u16 = 2, u24 = 3, u32 = 4, u64 = 8, i64 = 8, mac = 6 }

local MAX_TAGS = 64 -- wire.DumbNetMaxTags: a path in a message has at most 64 tags
local MIN_FRAME = 60 -- wire.MinFrameLen: a NIC pads a shorter frame with zeros up to it


-- valid_utf8 reports whether n bytes of tvb at off are UTF-8 as Go's
-- utf8.Valid accepts it: no overlong forms, no surrogates, at most U+10FFFF.
local function valid_utf8(tvb, off, n)
  local i, e = off, off + n
  while i < e do
    local c = tvb(i, 1):uint()
    local k, v, min
    if c < 0x80 then k, v, min = 0, c, 0
    elseif c >= 0xC2 and c <= 0xDF then k, v, min = 1, bit.band(c, 0x1F), 0x80
    elseif c >= 0xE0 and c <= 0xEF then k, v, min = 2, bit.band(c, 0x0F), 0x800
    elseif c >= 0xF0 and c <= 0xF4 then k, v, min = 3, bit.band(c, 0x07), 0x10000
    else return false end
    if i + k >= e then return false end
    for j = 1, k do
      local cc = tvb(i + j, 1):uint()
      if bit.band(cc, 0xC0) ~= 0x80 then return false end
      v = v * 64 + bit.band(cc, 0x3F)
    end
    if v < min or (v >= 0xD800 and v <= 0xDFFF) or v > 0x10FFFF then return false end
    i = i + 1 + k
  end
  return true
end

-- dissect_message returns the number of bytes used, or nil if malformed.
-- It flags everything wire.DecodeMessage rejects: a field cut short, bytes
-- after the message, reserved flag bits, values outside an enumeration, a
-- VLAN above 4095, a path longer than 64 tags or holding the end marker
-- 0xFF, unknown link flags, and a backplane prefix that does not fit its
-- address or its kind. Given frame_len, the length of the Ethernet frame
-- carrying the message less its VLAN tags (wire.UntaggedLen), or of the
-- Axon packet carrying it, it accepts what wire.DecodeMessagePadded accepts
-- besides: zero bytes after the message in a frame of at most 60 bytes,
-- a NIC's padding, shown as edgefabric.padding after the message.
local function dissect_message(tvb, pinfo, tree, frame_len)
  local len = tvb:len()
  if len < 1 then return nil end
  local st = tvb(0, 1):uint()
  local t = tree:add(msg, tvb(), "edgefabric " .. (SUBTYPES[st] or string.format("subtype 0x%02x", st)))
  t:add(F["edgefabric.subtype"], tvb(0, 1))
  pinfo.cols.protocol = "edgefabric"
  pinfo.cols.info = SUBTYPES[st] or string.format("unknown subtype 0x%02x", st)
  local layout = LAYOUT[st]
  if not layout then t:add_proto_expert_info(ef_malformed, "unknown subtype"); return nil end
  local off = 1
  local valid = true
  local vals = {} -- small integer fields by ProtoField, for the cross-field checks
  -- invalid flags a value the format forbids; dissection goes on.
  local function invalid(fmt, ...)
    t:add_proto_expert_info(ef_malformed, string.format(fmt, ...))
    valid = false
  end
  local function need(n)
    if off + n > len then error(string.format("truncated: needs %d bytes at offset %d, has %d", n, off, len), 0) end
  end
  local function addr(abbr)
    need(1)
    local n = tvb(off, 1):uint()
    off = off + 1
    if n == 4 then need(4); t:add(F[abbr .. "_ipv4"], tvb(off, 4))
    elseif n == 16 then need(16); t:add(F[abbr .. "_ipv6"], tvb(off, 16))
    elseif n ~= 0 then error(string.format("address length %d, want 0, 4 or 16", n), 0) end
    off = off + n
    return n
  end
  -- path reads a count byte and that many tags into tr.
  local function path(tr)
    need(1)
    local n = tvb(off, 1):uint()
    tr:add(F["edgefabric.path_len"], tvb(off, 1)); off = off + 1
    if n > MAX_TAGS then error(string.format("path of %d tags, at most %d", n, MAX_TAGS), 0) end
    need(n)
    for i = 0, n - 1 do
      tr:add(F["edgefabric.path_tag"], tvb(off + i, 1))
      if tvb(off + i, 1):uint() == 0xFF then invalid("path tag %d is the end marker 0xff", i) end
    end
    off = off + n
  end
  local ok, err = pcall(function()
    for _, step in ipairs(layout) do
      local kind, f = step[1], step[2]
      local pf = F[f] or f -- the ProtoField (steps name it by object or abbreviation)
      if SIZES[kind] then
        local n = SIZES[kind]
        need(n)
        if n <= 4 then vals[pf] = tvb(off, n):uint() end
        t:add(pf, tvb(off, n)); off = off + n
      elseif kind == "enum" then
        need(1)
        local v = tvb(off, 1):uint()
        vals[pf] = v
        t:add(pf, tvb(off, 1)); off = off + 1
        if not step[3][v] then invalid("value %d at offset %d is not defined", v, off - 1) end
      elseif kind == "vlan" then
        need(2)
        local v = tvb(off, 2):uint()
        t:add(pf, tvb(off, 2)); off = off + 2
        if v > 4095 then invalid("VLAN %d above 4095", v) end
      elseif kind == "flags1" then
        need(1)
        local v = tvb(off, 1):uint()
        t:add(pf, tvb(off, 1), bit.band(v, 1)); off = off + 1
        if bit.band(v, 0xFE) ~= 0 then invalid("flags 0x%02x: reserved bits set", v) end
      elseif kind == "helloflags" then
        need(1)
        local v = tvb(off, 1):uint()
        t:add(F["edgefabric.hello.reply"], tvb(off, 1), bit.band(v, 1))
        t:add(F["edgefabric.hello.wide"], tvb(off, 1), bit.band(v, 2) ~= 0 and 1 or 0)
        off = off + 1
        if bit.band(v, 0xFC) ~= 0 then invalid("flags 0x%02x: reserved bits set", v) end
      elseif kind == "ip" then
        addr(f)
      elseif kind == "path" then
        path(t)
      elseif kind == "links" then
        need(2)
        local n = tvb(off, 2):uint()
        t:add(F["edgefabric.link_count"], tvb(off, 2)); off = off + 2
        need(21 * n)
        for i = 1, n do
          local lt = t:add(msg, tvb(off, 21), "Link " .. i)
          lt:add(F["edgefabric.link.a"], tvb(off, 8))
          lt:add(F["edgefabric.link.a_port"], tvb(off + 8, 2))
          lt:add(F["edgefabric.link.b"], tvb(off + 10, 8))
          lt:add(F["edgefabric.link.b_port"], tvb(off + 18, 2))
          lt:add(F["edgefabric.link.flags"], tvb(off + 20, 1))
          local fl = tvb(off + 20, 1):uint()
          if bit.band(fl, 0xF0) ~= 0 then invalid("link %d flags 0x%02x: reserved bits set", i, fl) end
          off = off + 21
        end
      elseif kind == "neighbors" then
        need(1)
        local n = tvb(off, 1):uint()
        t:add(F["edgefabric.dnnbr.count"], tvb(off, 1)); off = off + 1
        for i = 1, n do
          -- MAC, then the path and the alternative path (count, tags).
          need(6)
          local start = off
          local nt = t:add(msg, tvb(off, 6), "Neighbour " .. i)
          nt:add(F["edgefabric.dnnbr.mac"], tvb(off, 6)); off = off + 6
          path(nt)
          path(nt)
          nt:set_len(off - start)
        end
      elseif kind == "echo" then
        if off < len then t:add(pf, tvb(off, len - off)) end
        off = len
      elseif kind == "name" then
        need(1)
        local n = tvb(off, 1):uint(); off = off + 1
        need(n)
        if n > 0 then t:add_packet_field(pf, tvb(off, n), ENC_UTF_8) end -- t:add reads ASCII
        if not valid_utf8(tvb, off, n) then invalid("name is not UTF-8") end
        off = off + n
      elseif kind == "prefix" then
        local a = off + 1
        local n = addr("edgefabric.nexthop.prefix")
        need(1)
        local bits = tvb(off, 1):uint()
        if n > 0 then t:add(F["edgefabric.nexthop.prefix_len"], tvb(off, 1)) end
        off = off + 1
        vals.prefix = n
        if n == 0 and bits ~= 0 then
          invalid("prefix length %d without an address", bits)
        elseif bits > 8 * n then
          invalid("prefix length %d for a %d-bit address", bits, 8 * n)
        else
          for i = 0, n - 1 do
            local keep = bits - 8 * i -- network bits in this byte
            local host = tvb(a + i, 1):uint()
            if keep >= 8 then host = 0 elseif keep > 0 then host = bit.band(host, bit.rshift(0xFF, keep)) end
            if host ~= 0 then invalid("prefix has host bits set after /%d", bits); break end
          end
        end
      end
    end
  end)
  if not ok then
    t:add_proto_expert_info(ef_malformed, tostring(err))
    return nil
  end
  if off < len then
    local padding = frame_len ~= nil and frame_len <= MIN_FRAME
    for i = off, len - 1 do
      if not padding then break end
      padding = tvb(i, 1):uint() == 0
    end
    if padding then
      t:set_len(off)
      tree:add(F["edgefabric.padding"], tvb(off, len - off))
    else
      invalid("%d bytes after the message", len - off)
    end
  end
  if st == 0x40 then
    local kind, port = vals[F["edgefabric.nexthop.kind"]], vals[F["edgefabric.nexthop.port"]]
    if kind == 1 and vals.prefix == 0 then invalid("ingress entry without a prefix") end
    if kind == 1 and port ~= 0 then invalid("ingress entry with port %d", port) end
    if kind == 2 and vals.prefix ~= 0 then invalid("egress entry with a prefix") end
  end
  if not valid then return nil end
  return off
end

function msg.dissector(tvb, pinfo, tree)
  -- The frame's length without its VLAN tags: header, EtherType, client data.
  return dissect_message(tvb, pinfo, tree, 14 + (client_len or tvb:reported_len())) or tvb:len()
end

ethertype_table:add(0x88B5, msg)

------------------------------------------------------------------------
-- DumbNet tag stack (EtherType 0x9800)

local dumbnet = Proto("dumbnet", "DumbNet tag stack")
local dn_tag = ProtoField.uint8("edgefabric.dumbnet.tag", "Tag (output port, 0 = switch ID query)", base.DEC)
local dn_end = ProtoField.uint8("edgefabric.dumbnet.end", "End marker", base.HEX)
local dn_inner = ProtoField.uint16("edgefabric.dumbnet.inner_type", "Inner EtherType", base.HEX)
dumbnet.fields = { dn_tag, dn_end, dn_inner }
local dn_malformed = ProtoExpert.new("edgefabric.dumbnet.malformed", "Malformed DumbNet tag stack", expert.group.MALFORMED, expert.severity.ERROR)
dumbnet.experts = { dn_malformed }

function dumbnet.dissector(tvb, pinfo, tree)
  local len = tvb:len()
  local t = tree:add(dumbnet, tvb())
  pinfo.cols.protocol = "DumbNet"
  local tags = {}
  for i = 0, math.min(len, 65) - 1 do
    local v = tvb(i, 1):uint()
    if v == 0xFF then
      t:add(dn_end, tvb(i, 1))
      if i + 3 > len then t:add_proto_expert_info(dn_malformed, "inner EtherType missing"); return len end
      t:add(dn_inner, tvb(i + 1, 2))
      t:set_len(i + 3)
      t:append_text(" [" .. table.concat(tags, "-") .. (#tags > 0 and "-" or "") .. "end]")
      pinfo.cols.info = "DumbNet path " .. table.concat(tags, "-") .. (#tags > 0 and "-" or "") .. "end"
      local inner = tvb(i + 1, 2):uint()
      if i + 3 == len and inner == 0x88B5 then
        -- wire.DecodeMessage: a control message has at least its subtype.
        t:add_proto_expert_info(dn_malformed, "no control message after inner EtherType 0x88b5")
      elseif i + 3 < len then
        local payload = tvb(i + 3):tvb()
        local saved = client_len
        if inner == 0x88B5 then
          client_len = tvb:reported_len() -- the tag stack starts the client data
        end
        call_sub(function()
          if ethertype_table:try(inner, payload, pinfo, tree) == 0 then
            data_dissector:call(payload, pinfo, tree)
          end
        end, t, dn_malformed)
        client_len = saved
      end
      return len
    end
    t:add(dn_tag, tvb(i, 1))
    tags[#tags + 1] = tostring(v)
  end
  t:add_proto_expert_info(dn_malformed, "no end marker")
  return len
end

ethertype_table:add(0x9800, dumbnet)

------------------------------------------------------------------------
-- Axon packets

local axon = Proto("axon", "Axon source-routed packet")
local AXON_TYPES = { [1] = "Ethernet", [2] = "Control", [3] = "Error", [4] = "Probe" }
local ax_type = ProtoField.uint8("edgefabric.axon.type", "Type", base.DEC, AXON_TYPES, 0x7F)
local ax_wide = ProtoField.bool("edgefabric.axon.wide", "8-bit hops", 8, nil, 0x80)
local ax_hlen = ProtoField.uint8("edgefabric.axon.hdr_len", "Header length", base.DEC)
local ax_fcnt = ProtoField.uint8("edgefabric.axon.fwd_count", "Forward hop count", base.DEC)
local ax_rcnt = ProtoField.uint8("edgefabric.axon.rev_count", "Reverse hop count", base.DEC)
local ax_opts = ProtoField.uint8("edgefabric.axon.options", "Probe options (1 stamp in, 2 stamp out)", base.DEC)
local ax_fhop = ProtoField.uint8("edgefabric.axon.fwd_hop", "Forward hop", base.DEC, { [0x0F] = "control plane" })
local ax_rhop = ProtoField.uint8("edgefabric.axon.rev_hop", "Reverse hop", base.DEC, { [0x0F] = "control plane" })
local ax_fhop8 = ProtoField.uint8("edgefabric.axon.fwd_hop", "Forward hop", base.DEC, { [0xFF] = "control plane" })
local ax_rhop8 = ProtoField.uint8("edgefabric.axon.rev_hop", "Reverse hop", base.DEC, { [0xFF] = "control plane" })
local pr_origin = ProtoField.uint64("edgefabric.probe.origin", "Origin Axon", base.DEC)
local pr_seq = ProtoField.uint32("edgefabric.probe.seq", "Seq", base.DEC)
local pr_port = ProtoField.uint8("edgefabric.probe.port", "Port", base.DEC)
local pr_dir = ProtoField.uint8("edgefabric.probe.dir", "Unit", base.DEC, DIRS)
local pr_time = ProtoField.int64("edgefabric.probe.time", "Time (ps)", base.DEC)
axon.fields = { ax_type, ax_wide, ax_hlen, ax_fcnt, ax_rcnt, ax_opts, ax_fhop, ax_rhop, ax_fhop8, ax_rhop8,
                pr_origin, pr_seq, pr_port, pr_dir, pr_time }
local ax_malformed = ProtoExpert.new("edgefabric.axon.malformed", "Malformed Axon packet", expert.group.MALFORMED, expert.severity.ERROR)
axon.experts = { ax_malformed }

local function hop_at(tvb, wide, i)
  if wide then return tvb(5 + i, 1), tvb(5 + i, 1):uint() end
  local r = tvb(5 + math.floor(i / 2), 1)
  local v = r:uint()
  if i % 2 == 0 then return r, bit.rshift(v, 4) end
  return r, bit.band(v, 0x0F)
end

function axon.dissector(tvb, pinfo, tree)
  local len = tvb:len()
  pinfo.cols.protocol = "Axon"
  local t = tree:add(axon, tvb())
  if len < 5 then t:add_proto_expert_info(ax_malformed, "shorter than the 5-byte fixed header"); return len end
  local b0 = tvb(0, 1):uint()
  local wide = bit.band(b0, 0x80) ~= 0
  local typ = bit.band(b0, 0x7F)
  local hlen, nf, nr = tvb(1, 1):uint(), tvb(2, 1):uint(), tvb(3, 1):uint()
  t:add(ax_type, tvb(0, 1))
  t:add(ax_wide, tvb(0, 1))
  t:add(ax_hlen, tvb(1, 1))
  t:add(ax_fcnt, tvb(2, 1))
  t:add(ax_rcnt, tvb(3, 1))
  t:add(ax_opts, tvb(4, 1))
  -- What wire.ParseAxon rejects besides the lengths: an unknown type,
  -- options other than the probe's two bits, hop 0, a non-zero pad nibble.
  if not AXON_TYPES[typ] then t:add_proto_expert_info(ax_malformed, string.format("unknown type %d", typ)) end
  local opts = tvb(4, 1):uint()
  if bit.band(opts, 0xFC) ~= 0 or (opts ~= 0 and typ ~= 4) then
    t:add_proto_expert_info(ax_malformed, string.format("options 0x%02x on a type %d packet", opts, typ))
  end
  local want = 5 + (wide and (nf + nr) or math.floor((nf + nr + 1) / 2))
  if hlen ~= want or hlen > len then
    t:add_proto_expert_info(ax_malformed, string.format("header length %d, hop counts need %d, packet has %d", hlen, want, len))
    return len
  end
  t:set_len(hlen)
  local fh, rh = wide and ax_fhop8 or ax_fhop, wide and ax_rhop8 or ax_rhop
  local fwd, rev = {}, {}
  for i = 0, nf - 1 do
    local r, v = hop_at(tvb, wide, i)
    t:add(fh, r, v); fwd[#fwd + 1] = tostring(v)
    if v == 0 then t:add_proto_expert_info(ax_malformed, string.format("forward hop %d is 0", i)) end
  end
  for i = 0, nr - 1 do
    local r, v = hop_at(tvb, wide, nf + i)
    t:add(rh, r, v); rev[#rev + 1] = tostring(v)
    if v == 0 then t:add_proto_expert_info(ax_malformed, string.format("reverse hop %d is 0", i)) end
  end
  if not wide and (nf + nr) % 2 == 1 and bit.band(tvb(hlen - 1, 1):uint(), 0x0F) ~= 0 then
    t:add_proto_expert_info(ax_malformed, "pad nibble is not 0")
  end
  local summary = string.format("Axon %s fwd [%s] rev [%s]", AXON_TYPES[typ] or ("type " .. typ),
    table.concat(fwd, " "), table.concat(rev, " "))
  t:append_text(": " .. summary)
  pinfo.cols.info = summary
  -- wire.AxonDecap needs a whole Ethernet header, wire.DecodeMessage a
  -- subtype, wire.AxonProbeBody its 12 fixed bytes.
  if typ == 1 and len - hlen < 14 then
    t:add_proto_expert_info(ax_malformed, string.format("encapsulated frame of %d bytes, shorter than an Ethernet header", len - hlen))
    return len
  elseif typ == 2 and hlen >= len then
    t:add_proto_expert_info(ax_malformed, "no control message")
    return len
  elseif typ == 4 and hlen >= len then
    t:add_proto_expert_info(ax_malformed, "probe body is not 12 bytes plus 10-byte records")
    return len
  end
  if hlen >= len then return len end
  local payload = tvb(hlen):tvb()
  -- An Axon packet is the frame on its link: a NIC pads one shorter than
  -- 60 bytes with zeros, which wire.DecodeMessagePadded and
  -- wire.DecodePadded drop after a control message or a probe's records.
  if typ == 1 or typ == 3 then
    call_eth(payload, pinfo, tree, t, ax_malformed)
  elseif typ == 2 then
    dissect_message(payload, pinfo, tree, len)
  elseif typ == 4 then
    local plen = payload:len()
    local pt = tree:add(axon, payload(), "Axon probe")
    -- The records end at the first record boundary from which every byte
    -- is zero (no record is: its unit is 1 or 2), if the packet is short
    -- enough to be padded.
    local body = plen
    if len <= MIN_FRAME then
      for b = 12, plen - 1, 10 do
        local zero = true
        for i = b, plen - 1 do
          if payload(i, 1):uint() ~= 0 then zero = false; break end
        end
        if zero then body = b; break end
      end
    end
    if plen < 12 or (body - 12) % 10 ~= 0 then
      pt:add_proto_expert_info(ax_malformed, "probe body is not 12 bytes plus 10-byte records")
      return len
    end
    if body < plen then
      pt:set_len(body)
      tree:add(F["edgefabric.padding"], payload(body, plen - body))
    end
    pt:add(pr_origin, payload(0, 8))
    pt:add(pr_seq, payload(8, 4))
    local off = 12
    while off + 10 <= body do
      local rt = pt:add(axon, payload(off, 10), "Timestamp record")
      rt:add(pr_port, payload(off, 1))
      rt:add(pr_dir, payload(off + 1, 1))
      local d = payload(off + 1, 1):uint()
      if not DIRS[d] then rt:add_proto_expert_info(ax_malformed, string.format("unit %d, want 1 (in) or 2 (out)", d)) end
      rt:add(pr_time, payload(off + 2, 8))
      off = off + 10
    end
  end
  return len
end

------------------------------------------------------------------------
-- LINKTYPE_USER0 captures: one encapsulation byte, then the frame.

local link = Proto("edgefabric_link", "edgefabric capture record")
local lk_encap = ProtoField.uint8("edgefabric.encap", "Encapsulation", base.DEC, { [1] = "Ethernet", [2] = "Axon" })
link.fields = { lk_encap }
local lk_malformed = ProtoExpert.new("edgefabric.link.malformed", "Malformed frame", expert.group.MALFORMED, expert.severity.ERROR)
link.experts = { lk_malformed }

function link.dissector(tvb, pinfo, tree)
  if tvb:len() < 1 then return 0 end
  local t = tree:add(link, tvb(0, 1))
  t:add(lk_encap, tvb(0, 1))
  local e = tvb(0, 1):uint()
  local rest = tvb(1):tvb()
  if e == 1 then
    call_eth(rest, pinfo, tree, t, lk_malformed)
  elseif e == 2 then
    axon.dissector(rest, pinfo, tree)
  else
    t:add_proto_expert_info(lk_malformed, string.format("unknown encapsulation byte %d (1 Ethernet, 2 Axon)", e))
  end
  return tvb:len()
end

local USER0 = (wtap_encaps and wtap_encaps.USER0) or wtap.USER0
DissectorTable.get("wtap_encap"):add(USER0, link)
