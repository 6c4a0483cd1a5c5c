(* Domains (OCaml 5): calls from any domain, concurrently, on one device and
   on the host: blits, copies, fills, submits of host launches and waits,
   while another domain's collections run the finalisers that release
   buffers; and the inside-a-lock check on a domain. *)
open Check

let get_ok = function Ok v -> v | Error e -> failwith e
let domains = 4
let rounds = 200

let worker d add i () =
  let errors = ref 0 in
  let n = 256 in
  let open Rig.Submission in
  let s = make Rig.host [| launch ~refs:[| read 0 ~at:0; read 1 ~at:8; write 2 ~at:16 |] add ~params:32 |] in
  let one = String.concat "" (List.init n (fun _ -> "\x00\x00\x80\x3f")) (* 1.0f *) in
  for r = 1 to rounds do
    let x = Rig.Buffer.create Rig.host (4 * n) and y = Rig.Buffer.create Rig.host (4 * n) in
    let z = Rig.Buffer.create Rig.host (4 * n) and m = Rig.Buffer.create d (4 * n) in
    Rig.Buffer.blit_from_string one 0 x 0 (4 * n);
    Rig.Buffer.copy ~src:x ~dst:y;
    let run = take s and k = block s 0 in
    Run.groups run k 4 1 1;
    Run.threads run k 64 1 1;
    Run.int64 run k 24 (Int64.of_int n);
    Rig.Point.wait (Rig.submit run ~buffers:[| x; y; z |]);
    Rig.Point.wait (Rig.Buffer.submit_copy ~src:z ~dst:m);
    Rig.Buffer.fill ~size:4 x (i * 1000 + r);
    let b = Bytes.create 8 in
    Rig.Buffer.blit_to_bytes m 0 b 0 4;
    Rig.Buffer.blit_to_bytes x 0 b 4 4;
    if Bytes.get_int32_le b 0 <> 0x40000000l (* 2.0f *) then incr errors;
    if Bytes.get_int32_le b 4 <> Int32.of_int (i * 1000 + r) then incr errors
  done;
  !errors

let () =
  let d = get_ok (Rig.memory_device "domains") in
  let obj = In_channel_compat.read_file "kernel_add.o" in
  let add = Option.get (Rig.Image.resolve (get_ok (Rig.Image.load Rig.host obj)) "add") in
  let collector = Domain.spawn (fun () -> for _ = 1 to 20 do Gc.full_major (); Unix.sleepf 0.005 done) in
  let ws = List.init domains (fun i -> Domain.spawn (worker d add i)) in
  let errors = List.fold_left (fun a w -> a + Domain.join w) 0 ws in
  Domain.join collector;
  check "every domain's work is right" (errors = 0);
  check "the device is not lost" (Rig.lost d = None);
  (* The inside-a-lock check on another domain: a finaliser that the
     collector hook's collection runs there calls Buffer.create. *)
  let seen = Atomic.make "" in
  let on_domain () =
    let e = get_ok (Rig.memory_device "domains-lock") in
    Rig.set_budget e 65536;
    let keep = Rig.Buffer.create e 32768 in
    ignore (Sys.opaque_identity (Rig.Buffer.create e 32768));
    let trigger = ref 0 in
    Gc.finalise
      (fun _ ->
        Atomic.set seen
          (match Rig.Buffer.create e 16 with _ -> "created" | exception Invalid_argument _ -> "Invalid_argument"))
      trigger;
    ignore (Sys.opaque_identity trigger);
    let b = Rig.Buffer.create e 32768 in
    ignore (Sys.opaque_identity (keep, b))
  in
  Domain.join (Domain.spawn on_domain);
  check "inside a lock on a domain: Invalid_argument" (Atomic.get seen = "Invalid_argument");
  finish "test_domains"
