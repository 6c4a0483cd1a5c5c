(* The core of Rig: devices, buffers, copies, fills, blits, points,
   submissions and host launches, and the exceptions (run by dune test). *)
open Check

let get_ok what = function Ok v -> v | Error e -> failwith (what ^ ": " ^ e)

let devices () =
  let h = Rig.host in
  check "host is named CPU" (Rig.name h = "CPU");
  check "host runs on host" (Rig.runs_on_host h);
  check "host computes" (Rig.computes h);
  check "host alignment 16" (Rig.alignment h = 16);
  check "host has no bus" (Rig.bus h = None);
  check "host budget is max_int" (Rig.budget h = max_int);
  check "instruction set" (List.mem (Rig.instruction_set h) [ "x86_64"; "arm64" ]);
  raises "close host" invalid (fun () -> Rig.close h);
  let m = get_ok "memory device" (Rig.memory_device "core-a") in
  let m' = get_ok "memory device again" (Rig.memory_device "core-a") in
  check "one value per device" (m == m' && Rig.equal m m');
  check "memory arch" (Rig.arch m = "memory");
  check "memory alignment 64" (Rig.alignment m = 64);
  check "memory runs on host" (Rig.runs_on_host m);
  check "host reaches memory" (Rig.reaches h m);
  check "not lost" (Rig.lost m = None);
  check "nothing submitted" (Rig.submitted m = 0);
  (match Rig.open_ (Rig_edge.plugin "nosuchdriver:0") with
  | Error _ -> check "no such driver is Error" true
  | Ok _ -> check "no such driver is Error" false);
  check "opener name" ((Rig_edge.plugin "memory:x").Rig_edge.name = "memory:x");
  m

let blits m =
  let dev = Rig.Buffer.create m 5 in
  check "length" (Rig.Buffer.length dev = 5);
  check "device" (Rig.Buffer.device dev == m);
  check "access" (Rig.Buffer.access dev = Rig.Buffer.Read_write);
  Rig.Buffer.blit_from_string "hello" 0 dev 0 5;
  let b = Bytes.create 5 in
  Rig.Buffer.blit_to_bytes dev 0 b 0 5;
  check "blit round trip" (Bytes.to_string b = "hello");
  raises "blit out of the bytes" invalid (fun () -> Rig.Buffer.blit_to_bytes dev 0 b 1 5);
  raises "blit out of the buffer" invalid (fun () -> Rig.Buffer.blit_from_string "hello" 0 dev 1 5);
  raises "negative create" invalid (fun () -> Rig.Buffer.create m (-1))

let copies m =
  let h = Rig.Buffer.create Rig.host 64 and d = Rig.Buffer.create m 64 in
  Rig.Buffer.fill ~size:4 h 0x01020304;
  Rig.Buffer.copy ~src:h ~dst:d;
  let b = Bytes.create 64 in
  Rig.Buffer.blit_to_bytes d 0 b 0 64;
  check "fill then copy" (Bytes.get_int32_le b 60 = 0x01020304l);
  let p = Rig.Buffer.submit_fill d 0xab in
  check "submit_fill point is the device's" (Rig.Point.device p = Some m);
  check "submit_fill value" (Rig.Point.value p = Rig.submitted m);
  Rig.Point.wait p;
  check "reached" (Rig.Point.reached p);
  check "signaled" (Rig.signaled m >= Rig.Point.value p);
  let p2 = Rig.Buffer.submit_copy ~src:d ~dst:h in
  Rig.Point.wait p2;
  Rig.Buffer.blit_to_bytes h 0 b 0 4;
  check "submit_copy" (Bytes.to_string (Bytes.sub b 0 4) = "\xab\xab\xab\xab");
  check "point prints" (String.length (Format.asprintf "%a" Rig.Point.pp p2) > 0);
  raises "fill of 3 bytes" invalid (fun () -> Rig.Buffer.fill ~size:3 d 0);
  raises "copy of unequal lengths" invalid (fun () ->
      Rig.Buffer.copy ~src:(Rig.Buffer.create m 4) ~dst:(Rig.Buffer.create m 8))

let views m =
  let b = Rig.Buffer.create m 64 in
  let v = Rig.Buffer.view ~off:8 ~len:8 b in
  check "view length" (Rig.Buffer.length v = 8);
  check "view overlaps" (Rig.Buffer.overlaps b v);
  let r = Rig.Buffer.view ~access:Rig.Buffer.Read b in
  check "read view" (Rig.Buffer.access r = Rig.Buffer.Read);
  raises "view out of range" invalid (fun () -> Rig.Buffer.view ~off:60 ~len:8 b);
  Rig.Buffer.free b;
  check "free kills views" (Rig.Buffer.is_dead v);
  raises "dead buffer" invalid (fun () -> Rig.Buffer.fill v 0)

let errors () =
  let d = Result.get_ok (Rig.memory_device "core-oom") in
  Rig.set_budget d 4096;
  check "budget" (Rig.budget d = 4096);
  raises "set_budget negative" invalid (fun () -> Rig.set_budget d (-1));
  let keep = Rig.Buffer.create d 4096 in
  raises "out of memory" (function Rig.Out_of_memory (d', 100) -> d' == d | _ -> false)
    (fun () -> Rig.Buffer.create d 100);
  check "allocated" (Rig.allocated d >= 4096);
  ignore (Sys.opaque_identity keep);
  let l = Result.get_ok (Rig.memory_device "core-lost") in
  let b = Rig.Buffer.create l 16 in
  Rig.close l;
  check "closed is lost" (Rig.lost l = Some "closed");
  raises "use after close" (function Rig.Lost (d', "closed") -> d' == l | _ -> false)
    (fun () -> Rig.Buffer.fill b 0);
  check "Lost prints" (Printexc.to_string (Rig.Lost (l, "closed")) = Rig.name l ^ " lost: closed")

(* The seed's add kernel (Objects), linked on host and launched over n floats. *)
let launches () =
  let obj = In_channel_compat.read_file "kernel_add.o" in
  let image = Result.get_ok (Rig.Image.load Rig.host obj) in
  check "image device" (Rig.Image.device image == Rig.host);
  check "no such function" (Rig.Image.resolve image "nope" = None);
  let add = Option.get (Rig.Image.resolve image "add") in
  check "function name" (Rig.Image.name add = "add");
  check "host states no params" (Rig.Image.params add = 0);
  check "entry" (Rig.Image.entry add <> 0L);
  let n = 1000 in
  let floats f =
    let b = Rig.Buffer.create Rig.host (4 * n) and s = Bytes.create (4 * n) in
    for i = 0 to n - 1 do Bytes.set_int32_le s (4 * i) (Int32.bits_of_float (f i)) done;
    Rig.Buffer.blit_from_string (Bytes.to_string s) 0 b 0 (4 * n);
    b
  in
  let x = floats float_of_int and y = floats (fun i -> float_of_int (2 * i)) in
  let z = floats (fun _ -> 0.) in
  let open Rig.Submission in
  let refs = [| read 0 ~at:0; read 1 ~at:8; write 2 ~at:16 |] in
  let s = make Rig.host [| launch ~refs add ~params:32 |] in
  check "slots" (slots s = 3);
  for round = 1 to 3 do
    let run = take s and k = block s 0 in
    Run.groups run k 64 1 1;
    Run.threads run k ((n + 63) / 64) 1 1;
    Run.int64 run k 24 (Int64.of_int n);
    let p = Rig.submit run ~buffers:[| x; y; z |] in
    check "host launch is done when submit returns" (Rig.Point.reached p);
    check (Printf.sprintf "submit %d" round) (Rig.Point.device p = Some Rig.host)
  done;
  let out = Bytes.create (4 * n) in
  Rig.Buffer.blit_to_bytes z 0 out 0 (4 * n);
  let ok = ref true in
  for i = 0 to n - 1 do
    if Int32.float_of_bits (Bytes.get_int32_le out (4 * i)) <> float_of_int (3 * i) then ok := false
  done;
  check "z = x + y" !ok;
  let run = take s in
  raises "submit with a missing buffer" invalid (fun () -> Rig.submit run ~buffers:[| x; y |]);
  let run = take s in
  let rd = Rig.Buffer.view ~access:Rig.Buffer.Read z in
  raises "write through a Read buffer" invalid (fun () -> Rig.submit run ~buffers:[| x; y; rd |]);
  raises "block of no part" invalid (fun () -> block s 5);
  (match Rig.Image.load Rig.host "not an object" with
  | Error _ -> check "a bad object is Error" true
  | Ok _ -> check "a bad object is Error" false)

(* Host access: bigarrays over the bytes, in place. *)
let host_access () =
  let m = Result.get_ok (Rig.memory_device "core-access") in
  let b = Rig.Buffer.create m 16 in
  Rig.Buffer.write b (fun a -> for i = 0 to 15 do Bigarray.Array1.set a i i done);
  check "write then read" (Rig.Buffer.read b (fun a -> Bigarray.Array1.get a 15) = 15);
  Rig.Point.wait (Rig.Buffer.submit_fill b 7);
  check "read follows the fill" (Rig.Buffer.read b (fun a -> Bigarray.Array1.get a 3) = 7);
  let e = Rig.Buffer.export b in
  check "export" (Bigarray.Array1.dim e = 16 && Bigarray.Array1.get e 0 = 7);
  raises "write through a Read view" invalid (fun () ->
      Rig.Buffer.write (Rig.Buffer.view ~access:Rig.Buffer.Read b) ignore);
  ignore (Sys.opaque_identity e)

(* Claims: with_, only, consume (a donation), and a hold. *)
let claims () =
  let m = Result.get_ok (Rig.memory_device "core-claims") in
  let b = Rig.Buffer.create m 16 in
  Rig.Buffer.fill b 1;
  let v = Rig.Buffer.view ~off:0 ~len:8 b in
  let out =
    Rig.Claim.with_ b (fun c ->
        check "the only claim" (Rig.Claim.only c);
        raises "a second with_" invalid (fun () -> Rig.Claim.with_ v ignore);
        Rig.Claim.consume c)
  in
  check "consume kills the earlier buffers" (Rig.Buffer.is_dead b && Rig.Buffer.is_dead v);
  check "the donor's buffer" (Rig.Buffer.length out = 16 && not (Rig.Buffer.is_dead out));
  let kept = ref None in
  Rig.Claim.with_ out (fun c -> kept := Some c);
  raises "a claim after its with_" invalid (fun () -> Rig.Claim.only (Option.get !kept));
  let h = Rig.Claim.hold out in
  Rig.Claim.with_ out (fun c -> check "a hold is another claim" (not (Rig.Claim.only c)));
  ignore (Sys.opaque_identity h);
  raises "with_ passes f's exception" (function Exit -> true | _ -> false) (fun () ->
      Rig.Claim.with_ out (fun _ -> raise Exit))

(* Values per device: made once per device by the key's init. *)
let locals () =
  let made = ref 0 in
  let k = Rig.Local.new_key (fun d -> incr made; Rig.name d ^ "!") in
  let a = Result.get_ok (Rig.memory_device "core-local-a") in
  let b = Result.get_ok (Rig.memory_device "core-local-b") in
  check "a's value" (Rig.Local.get k a = Rig.name a ^ "!");
  check "again, not made again" (Rig.Local.get k a = Rig.name a ^ "!" && !made = 1);
  check "b's own value" (Rig.Local.get k b = Rig.name b ^ "!" && !made = 2);
  let bad = Rig.Local.new_key (fun d -> ignore (Rig.Buffer.create d 4); 0) in
  raises "a call that locks from init" invalid (fun () -> Rig.Local.get bad a);
  Rig.close b;
  raises "a lost device without the value" (function Rig.Lost _ -> true | _ -> false) (fun () ->
      Rig.Local.get bad b)

let () =
  let m = devices () in
  blits m;
  copies m;
  views m;
  errors ();
  launches ();
  host_access ();
  claims ();
  locals ();
  finish "test_core"

