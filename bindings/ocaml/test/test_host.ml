(* Buffers over OCaml's memory (Buffer.of_bigarray), made from a string
   (Buffer.of_string), and Submission.address (run by dune test). *)
open Check
open Bigarray

let get_ok what = function Ok v -> v | Error e -> failwith (what ^ ": " ^ e)

(* The buffer is the array's memory: writes through either show in the
   other, with no copy. *)
let of_bigarray () =
  let a = Array1.create int8_unsigned c_layout 64 in
  Array1.fill a 1;
  let b = Rig.Buffer.of_bigarray a in
  check "of_bigarray length" (Rig.Buffer.length b = 64);
  check "of_bigarray on host" (Rig.Buffer.device b == Rig.host);
  Rig.Buffer.fill b 7;
  check "fill shows in the array" (a.{0} = 7 && a.{63} = 7);
  a.{5} <- 42;
  let s = Bytes.create 1 in
  Rig.Buffer.blit_to_bytes b 5 s 0 1;
  check "array write shows in the buffer" (Bytes.get_uint8 s 0 = 42);
  let f = Array1.create float64 c_layout 4 in
  let fb = Rig.Buffer.of_bigarray f in
  check "float64 array: 32 bytes" (Rig.Buffer.length fb = 32);
  (* WORD-2: host words count from address 0: a sub-array 3 bytes into a
     word-aligned array starts its buffer at a byte of its first word *)
  let sub = Array1.sub a 3 10 in
  let sb = Rig.Buffer.of_bigarray sub in
  let v0 = Rig.Buffer.view ~off:0 ~len:1 sb and v1 = Rig.Buffer.view ~off:1 ~len:1 sb in
  check "words from address 0" (not (Rig.Buffer.overlaps v0 v1));
  Rig.Buffer.blit_from_string "\x09" 0 v1 0 1;
  check "sub-array's buffer" (a.{4} = 9);
  (* a memory device takes host memory off a page *)
  let m = get_ok "memory device" (Rig.memory_device "of-bigarray") in
  let mb = Rig.Buffer.of_bigarray ~device:m sub in
  check "on a memory device" (Rig.Buffer.device mb == m);
  Rig.Buffer.fill mb 3;
  check "memory device fills the array" (a.{3} = 3 && a.{12} = 3 && a.{13} = 7 && a.{2} = 7);
  Rig.close m

(* The array stays reachable while rig uses its memory, and goes once the
   buffer is unreachable and its memory moved. *)
let keeps_the_array () =
  let gone = ref false in
  let b =
    let a = Array1.create int8_unsigned c_layout (1 lsl 20) in
    Gc.finalise (fun _ -> gone := true) a;
    Rig.Buffer.of_bigarray a
  in
  Gc.full_major ();
  check "the buffer keeps the array" (not !gone);
  Rig.Buffer.fill b 1;
  ignore (Sys.opaque_identity b);
  let rec settle i =
    Gc.full_major ();
    Rig.free_cache Rig.host;
    Gc.full_major ();
    if (not !gone) && i > 0 then settle (i - 1)
  in
  settle 5;
  check "the array goes after the buffer" !gone

let of_string () =
  let b = Rig.Buffer.of_string "the seed's of_string" in
  check "of_string length" (Rig.Buffer.length b = 20);
  let out = Bytes.create 20 in
  Rig.Buffer.blit_to_bytes b 0 out 0 20;
  check "of_string bytes" (Bytes.to_string out = "the seed's of_string");
  let m = get_ok "memory device" (Rig.memory_device "of-string") in
  let mb = Rig.Buffer.of_string ~device:m "abc" in
  check "of_string on a device" (Rig.Buffer.device mb == m);
  Rig.Buffer.blit_to_bytes mb 0 out 0 3;
  check "of_string on a device: bytes" (Bytes.sub_string out 0 3 = "abc");
  check "empty of_string" (Rig.Buffer.length (Rig.Buffer.of_string "") = 0);
  Rig.close m

(* Submission.address is what a ref stores: the add kernel, its block
   filled by hand from the addresses, adds. *)
let address () =
  let obj = In_channel_compat.read_file "kernel_add.o" in
  let image = Result.get_ok (Rig.Image.load Rig.host obj) in
  let add = Option.get (Rig.Image.resolve image "add") in
  let n = 256 in
  let floats f =
    let a = Array1.create float32 c_layout n in
    for i = 0 to n - 1 do a.{i} <- f i done;
    a
  in
  let xa = floats float_of_int and ya = floats (fun i -> float_of_int (2 * i)) in
  let za = floats (fun _ -> 0.) in
  let x = Rig.Buffer.of_bigarray xa and y = Rig.Buffer.of_bigarray ya in
  let z = Rig.Buffer.of_bigarray za in
  let open Rig.Submission in
  let s = make Rig.host [| launch add ~params:32 |] in
  let ax = address s x in
  check "address is the host address" (Int64.to_nativeint ax = Rig.Buffer.host_address x);
  check "a view's address"
    (address s (Rig.Buffer.view ~off:8 ~len:8 x) = Int64.add ax 8L);
  let run = take s and k = block s 0 in
  Run.groups run k 4 1 1;
  Run.threads run k 64 1 1;
  Run.int64 run k 0 ax;
  Run.int64 run k 8 (address s y);
  Run.int64 run k 16 (address s z);
  Run.int64 run k 24 (Int64.of_int n);
  ignore (Rig.submit run ~buffers:[||]);
  let ok = ref true in
  for i = 0 to n - 1 do if za.{i} <> float_of_int (3 * i) then ok := false done;
  check "z = x + y through addresses" !ok;
  ignore (Sys.opaque_identity (x, y, z));
  let dead = Rig.Buffer.create Rig.host 8 in
  Rig.Buffer.free dead;
  raises "address of a dead buffer" invalid (fun () -> address s dead)

(* Buffer.of_bigarray takes no lock: a finaliser that the collector hook's
   collection runs inside reclamation's lock makes one, where of_string,
   which may lock, raises Invalid_argument. *)
let inside_a_lock () =
  let kib = 1024 and seen = ref [] in
  let d = get_ok "memory device" (Rig.memory_device "host-inside-lock") in
  Rig.set_budget d (256 * kib);
  let keep = Rig.Buffer.create d (128 * kib) in
  let plant () =
    let trigger = ref 0 in
    Gc.finalise
      (fun _ ->
        let a = Array1.create char c_layout 16 in
        let lent = match Rig.Buffer.of_bigarray a with _ -> "made" | exception e -> Printexc.to_string e in
        let copied = match Rig.Buffer.of_string "x" with _ -> "made" | exception Invalid_argument _ -> "Invalid_argument" in
        seen := (lent, copied) :: !seen)
      trigger;
    ignore (Sys.opaque_identity trigger)
  in
  ignore (Sys.opaque_identity (Rig.Buffer.create d (128 * kib)));
  Gc.full_major ();
  ignore (Sys.opaque_identity (Rig.Buffer.create d (128 * kib)));
  plant ();
  let b = Rig.Buffer.create d (128 * kib) in
  check "the finaliser ran inside the collector hook" (!seen <> []);
  List.iter
    (fun (lent, copied) ->
      check ("of_bigarray inside a lock: " ^ lent) (lent = "made");
      check "of_string inside a lock is Invalid_argument" (copied = "Invalid_argument"))
    !seen;
  ignore (Sys.opaque_identity (keep, b));
  Rig.close d

let () =
  of_bigarray ();
  keeps_the_array ();
  of_string ();
  address ();
  inside_a_lock ();
  finish "test_host"
