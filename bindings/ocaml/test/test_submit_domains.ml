(* Submits from several domains at once (OCaml 5). Each domain takes runs
   of one shared submission and submits launches of add on the host: most
   of one group, which the stub submits holding its domain's lock
   (rig_run_submit_try runs them at once), and every fourth of several
   groups, which the try answers busy where the pool's workers would run
   them (a host of more than one core), so the stub submits those with the
   lock released. Meanwhile another domain's collections run and the
   domains contend for the host's submit lock, which also sends tries to
   the blocking path. Each launch's sums are there when submit returns,
   every submit's value is taken once, and a submit allocates nothing on
   the OCaml heap but for the Run.t of its take. *)
open Check

let get_ok = function Ok v -> v | Error e -> failwith e
let domains = 4
let rounds = 500
let n = 256
let float_bytes f = String.concat "" (List.init n (fun _ -> let b = Bytes.create 4 in Bytes.set_int32_le b 0 (Int32.bits_of_float f); Bytes.to_string b))
let x_bytes = float_bytes 1.0 and y_bytes = float_bytes 2.0

let worker s i () =
  let open Rig.Submission in
  let x = Rig.Buffer.create Rig.host (4 * n) and y = Rig.Buffer.create Rig.host (4 * n) in
  let z = Rig.Buffer.create Rig.host (4 * n) in
  Rig.Buffer.blit_from_string x_bytes 0 x 0 (4 * n);
  Rig.Buffer.blit_from_string y_bytes 0 y 0 (4 * n);
  let errors = ref 0 and values = Array.make rounds 0 and b = Bytes.create 8 in
  let k = block s 0 and buffers = [| x; y; z |] in
  for r = 0 to rounds - 1 do
    Rig.Buffer.fill ~size:4 z (i * 1000 + r);
    let run = take s in
    let groups = if r mod 4 = 3 then 4 else 1 in
    Run.groups run k groups 1 1;
    Run.threads run k (n / groups) 1 1;
    Run.int64 run k 24 (Int64.of_int n);
    let w0 = Gc.minor_words () in
    let p = Rig.submit run ~buffers in
    if Gc.minor_words () -. w0 <> 0. then incr errors;
    values.(r) <- Rig.Point.value p;
    Rig.Buffer.blit_to_bytes z 0 b 0 4;
    Rig.Buffer.blit_to_bytes z (4 * (n - 1)) b 4 4;
    if Bytes.get_int32_le b 0 <> 0x40400000l || Bytes.get_int32_le b 4 <> 0x40400000l (* 3.0f *)
    then incr errors
  done;
  (!errors, values)

let () =
  let obj = In_channel_compat.read_file "kernel_add.o" in
  let add = Option.get (Rig.Image.resolve (get_ok (Rig.Image.load Rig.host obj)) "add") in
  let s =
    Rig.Submission.(make Rig.host [| launch ~refs:[| read 0 ~at:0; read 1 ~at:8; write 2 ~at:16 |] add ~params:32 |])
  in
  let stop = Atomic.make false in
  let collector = Domain.spawn (fun () -> while not (Atomic.get stop) do Gc.full_major (); Unix.sleepf 0.002 done) in
  let ws = List.init domains (fun i -> Domain.spawn (worker s i)) in
  let results = List.map Domain.join ws in
  Atomic.set stop true;
  Domain.join collector;
  check "every launch's sums are there at submit's return, and no submit allocated"
    (List.for_all (fun (e, _) -> e = 0) results);
  let values = Array.concat (List.map snd results) in
  Array.sort compare values;
  let once = ref true in
  Array.iteri (fun j v -> if j > 0 && values.(j - 1) = v then once := false) values;
  check "every submit took a value of its own" !once;
  finish "test_submit_domains"
