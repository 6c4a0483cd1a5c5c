(* A driver written in OCaml (Rig_edge.Driver): its devices open through
   Rig.open_, state its facts, allocate through it, and run its copies and
   fills; a Fault loses the device with its text; close stops it once. *)
open Check

type dev = { mutable submits : int; mutable stops : int; mutable fault : string option }

(* The handles the driver made, by their args, for the test to reach. *)
let handles : (string, dev) Hashtbl.t = Hashtbl.create 4
let allocs = ref 0

let open_ args =
  if args = "refused" then Error "mlmem: no such device"
  else begin
    let h = { submits = 0; stops = 0; fault = None } in
    Hashtbl.replace handles args h;
    Ok h
  end

let submit h parts =
  (match h.fault with Some why -> raise (Rig_edge.Fault why) | None -> ());
  h.submits <- h.submits + 1;
  Array.iter
    (function
      | Rig_edge.Driver.Copy { src; dst } -> Bigarray.Array1.blit src dst
      | Rig_edge.Driver.Fill { dst; pattern; size } ->
          for i = 0 to Bigarray.Array1.dim dst - 1 do
            dst.{i} <- (pattern lsr (8 * (i mod size))) land 0xff
          done)
    parts

let driver =
  Rig_edge.Driver.make ~name:"mlmem" ~open_
    ~facts:(fun _ -> { Rig_edge.Driver.arch = "mlmem"; alignment = 16; budget = 1 lsl 20; cache_bytes = Some 4096 })
    ~allocate:(fun _ n ->
      incr allocs;
      if n > 1 lsl 16 then None else Some (Bigarray.Array1.create Bigarray.int8_unsigned Bigarray.c_layout (max n 1)))
    ~submit
    ~stop:(fun h -> h.stops <- h.stops + 1)

let contents b =
  let n = Rig.Buffer.length b in
  let s = Bytes.create n in
  Rig.Buffer.blit_to_bytes b 0 s 0 n;
  Bytes.to_string s

let run d parts buffers = Rig.submit (Rig.Submission.take (Rig.Submission.make d parts)) ~buffers

let opens () =
  let d = Result.get_ok (Rig.open_ (Rig_edge.Driver.opener driver "a")) in
  check "its name" (Rig.name d = "mlmem:a");
  check "its facts" (Rig.arch d = "mlmem" && Rig.alignment d = 16 && Rig.cache_bytes d = Some 4096);
  check "its budget" (Rig.budget d = 1 lsl 20);
  check "it runs on host" (Rig.runs_on_host d && Rig.computes d);
  check "the same device again" (Rig.open_ (Rig_edge.Driver.opener driver "a") = Ok d);
  (match Rig.open_ (Rig_edge.Driver.opener driver "refused") with
  | Error why -> check "open's Error" (String.length why > 0)
  | Ok _ -> check "open's Error" false);
  raises "a name with ':'" invalid (fun () ->
      Rig_edge.Driver.make ~name:"a:b" ~open_ ~facts:(fun _ -> assert false) ~allocate:(fun _ _ -> None)
        ~submit ~stop:ignore);
  d

let work d =
  let a = Rig.Buffer.create d 64 and b = Rig.Buffer.create d 64 in
  check "its allocate made the memory" (!allocs >= 2);
  raises "an allocate with no room" (function Rig.Out_of_memory (e, n) -> e == d && n = 1 lsl 17 | _ -> false)
    (fun () -> Rig.Buffer.create d (1 lsl 17));
  check "not lost for it" (Rig.lost d = None);
  let p = Rig.Submission.(run d [| fill ~size:2 0 0x4241 |] [| a |]) in
  check "done when submit returns" (Rig.Point.reached p && Rig.Point.device p = Some d);
  check "the fill ran in OCaml" (contents a = String.concat "" (List.init 32 (fun _ -> "AB")));
  ignore Rig.Submission.(run d [| copy ~src:0 ~dst:1 |] [| a; b |]);
  check "the copy" (contents b = contents a);
  check "two submits" ((Hashtbl.find handles "a").submits = 2);
  Rig.Buffer.blit_from_string "hello" 0 a 0 5;
  let h = Rig.Buffer.create Rig.host 64 in
  Rig.Buffer.copy ~src:a ~dst:h;
  check "a copy to the host" (String.sub (contents h) 0 5 = "hello")

(* Threads that submit at once: each driver call takes the runtime lock
   back from the submit that released it. *)
let threads d =
  let one k () =
    let b = Rig.Buffer.create d 16 in
    let ok = ref true in
    for i = 1 to 50 do
      let v = (k * 64 + i) land 0xff in
      ignore Rig.Submission.(run d [| fill 0 v |] [| b |]);
      if contents b <> String.make 16 (Char.chr v) then ok := false
    done;
    !ok
  in
  let results = Array.make 3 false in
  let ts = List.init 3 (fun k -> Thread.create (fun () -> results.(k) <- one k ()) ()) in
  List.iter Thread.join ts;
  check "three threads' submits" (Array.for_all Fun.id results)

(* A Fault loses the device, with its text as the reason. *)
let fault () =
  let e = Result.get_ok (Rig.open_ (Rig_edge.Driver.opener driver "faulty")) in
  let x = Rig.Buffer.create e 8 in
  (Hashtbl.find handles "faulty").fault <- Some "the card fell out";
  raises "a submit the driver faults" (function Rig.Lost (d, _) -> d == e | _ -> false) (fun () ->
      Rig.Submission.(run e [| fill 0 1 |] [| x |]));
  check "lost with the fault's text" (Rig.lost e = Some "the card fell out");
  Rig.close e;
  check "its stop ran once" ((Hashtbl.find handles "faulty").stops = 1)

let () =
  let d = opens () in
  work d;
  threads d;
  fault ();
  Rig.close d;
  check "closed" (Rig.lost d = Some "closed" && (Hashtbl.find handles "a").stops = 1);
  (match Rig.open_ (Rig_edge.Driver.opener driver "a") with
  | Ok d' -> check "a reopened name is another device" (d' != d && Rig.lost d' = None); Rig.close d'
  | Error why -> check ("reopen: " ^ why) false);
  Gc.full_major ();
  finish "test_driver"
